// Package viewerassets holds the built viewer page (harness.js,
// harness.css and the icons they load) embedded in the queryreplay binary,
// so that one file serves the replay.
//
// The page is built by npm (npm run build:harness) and copied into page/
// by the Makefile before go build (make build-cli). A clean clone has only
// page/README.md there, so go build and go vet work before npm has run;
// FS then reports that nothing is embedded and the CLI looks on disk.
package viewerassets

import (
	"embed"
	"io/fs"
)

//go:embed all:page
var files embed.FS

// Entry is the file whose presence means the page was built and embedded.
const Entry = "harness.js"

// FS returns the embedded page and true, or nil and false when the binary
// was built without it (only the placeholder README is there).
func FS() (fs.FS, bool) {
	return pageFS(files)
}

func pageFS(root fs.FS) (fs.FS, bool) {
	sub, err := fs.Sub(root, "page")
	if err != nil {
		return nil, false
	}
	if _, err := fs.Stat(sub, Entry); err != nil {
		return nil, false
	}
	return sub, true
}
