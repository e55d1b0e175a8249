# QueryReplay — the two commands a new machine needs:
#   make demo   the stand-in, the exporter, traced scenarios and the viewer (queryreplay demo)
#   make test   run every test suite
# Both install what they need first (make setup).

GO       ?= go
GOTEST   ?= $(GO) test
BIN      := bin
GPX      := dist/datasource/gpx_queryreplay_linux_amd64
# Our packages, named explicitly: ./... would also walk node_modules, where
# some npm packages ship Go code.
GOPKGS   := ./cmd/... ./internal/... ./pkg/...

.PHONY: all setup build build-frontend build-backend build-cli build-viewer demo dist screenshots test test-frontend test-go test-browser perf-browser build-harness vet lint typecheck check-dist clean

all: build

setup:
	@scripts/setup.sh

build: build-frontend build-backend build-cli

build-frontend: setup
	npm run build

build-backend:
	$(GO) tool mage -v build:linux

# The CLI with the viewer's page embedded (internal/viewerassets): one
# file serves the replay. go build alone (a clean clone, no npm) still
# works; that binary looks for the page on disk instead.
build-cli: build-viewer
	$(GO) build -o $(BIN)/queryreplay ./cmd/queryreplay

# The viewer's page (the replay panel bundled with its dependencies),
# copied where go:embed takes it into the CLI.
VIEWER_EMBED := internal/viewerassets/page
build-viewer: setup
	npm run build:harness
	find $(VIEWER_EMBED) -mindepth 1 ! -name README.md -exec rm -rf {} +
	cp -R tests/browser/dist/. $(VIEWER_EMBED)/

# The demo needs the CLI and the viewer's page, not the Grafana build.
# DEMO_ARGS are passed on (make demo DEMO_ARGS=--once).
demo:
	@$(MAKE) --no-print-directory build-cli
	@scripts/demo.sh $(DEMO_ARGS)

# The plugin zip for the catalog (scripts/dist.sh): dist/ with backends for
# DIST_PLATFORMS (mage build targets; each extra platform is a full
# cross-compile, a few minutes on 2 cores), unsigned unless
# GRAFANA_ACCESS_POLICY_TOKEN is set. Writes release/<id>-<version>.zip.
DIST_PLATFORMS ?= build:linux build:linuxARM64
dist: build-frontend
	$(GO) tool mage -v $(DIST_PLATFORMS)
	scripts/dist.sh dist release

# Refresh the screenshots plugin.json and the README show from the browser
# test (the viewer on the stand-in in headless Chromium). Every PNG they
# show is copied here (internal/releasecheck TestScreenshotsTargetRefreshesEveryImage).
screenshots: test-browser
	cp tests/output/replay-dark-large.png src/img/replay.png
	cp tests/output/replay-light-large.png src/img/screenshot-replay-light.png
	cp tests/output/replay-dark-pages.png src/img/screenshot-page-map.png
	cp tests/output/replay-dark-large.png docs/img/replay.png
	cp tests/output/replay-light-small.png docs/img/replay-small-light.png
	cp tests/output/header-1920x1080-dark.png docs/img/replay-header.png
	cp tests/output/header-1920x1080-light.png docs/img/replay-header-light.png
	cp tests/output/diagram-1920x1080-dark.png docs/img/replay-diagram-dark.png
	cp tests/output/diagram-1920x1080-light.png docs/img/replay-diagram-light.png
	cp tests/output/diagram-1280x720-dark.png docs/img/replay-1280x720-dark.png
	cp tests/output/diagram-1280x720-light.png docs/img/replay-1280x720-light.png
	cp tests/output/statements-1920x1080-dark.png docs/img/replay-statements-dark.png
	cp tests/output/statements-1920x1080-light.png docs/img/replay-statements-light.png

typecheck: setup
	npm run typecheck

lint: setup
	npm run lint

vet:
	$(GO) vet $(GOPKGS)

test-frontend: setup
	npm run typecheck
	npm run lint
	npm run test:ci

check-dist: build
	scripts/check-dist.sh

# go test runs last so that its summary closes the output. GPX_BINARY makes
# the gRPC test drive the binary that mage put in dist/.
# QUERYREPLAY_REQUIRE_EMBEDDED_VIEWER: the build (check-dist ->
# build-cli) embedded the page npm built, so its test must find it.
test-go: vet check-dist
	GPX_BINARY=$(CURDIR)/$(GPX) QUERYREPLAY_REQUIRE_EMBEDDED_VIEWER=1 $(GOTEST) -count=1 $(GOPKGS)

# The real panel bundle in Debian's headless Chromium (playwright-core, no
# browser download), with frames from the real datasource tracing on the
# stand-in through pkg/viewer; screenshots land in tests/output/.
build-harness: setup
	npm run build:harness
	$(GO) build -o $(BIN)/harness-server ./internal/viewertest/harness-server

test-browser: build-harness
	npm run test:browser

# Browser performance on a generated 1,000,000-event trace (not part of make test).
perf-browser: build-harness
	npm run perf:browser

test: test-frontend test-browser test-go

clean:
	rm -rf dist coverage release $(BIN)
	find $(VIEWER_EMBED) -mindepth 1 ! -name README.md -exec rm -rf {} +

# Benchmarks asked for by the issues (not part of make test). The libxml2
# peer needs Debian's python3-lxml.
.PHONY: bench
bench:
	$(GO) test ./pkg/xe -run '^$$' -bench 'Decode|LxmlPeer|ProjectedRow' -benchtime 3x -cpu 1
	$(GO) test ./pkg/showplan -run '^$$' -bench . -benchtime 5x
	$(GO) test ./pkg/timeline -run '^$$' -bench BuildMillion -benchtime 3x -cpu 1
	$(GO) test ./pkg/pdb -run '^$$' -bench . -benchtime 10x
	$(GO) test ./cmd/queryreplay -run '^$$' -bench SymbolsResolve100k -benchtime 5x
	$(GO) test ./pkg/xe -run '^$$' -bench HugeValueMemory -benchtime 2x
	$(GO) test ./pkg/callstack -run '^$$' -bench ClassifyDistinct
	$(GO) test ./pkg/plugin -run '^$$' -bench 'View1M' -benchtime 20x
	$(GO) test ./pkg/plugin -run '^$$' -bench 'Trace100k|Store20x100k' -benchtime 1x
	$(GO) test ./pkg/exporter -run '^$$' -bench 'Ingest|Scrape' -benchtime 3x -cpu 1
	$(GO) test ./pkg/exporter -run '^$$' -bench SoakChurn -benchtime 1x
	$(GO) test ./pkg/findings -run '^$$' -bench Analyze1M -benchtime 3x -cpu 1
	$(MAKE) perf-browser

# The exporter's 10-minute memory soak at the label limit (issue 17; not in
# make test or make bench).
.PHONY: soak
soak:
	QUERYREPLAY_SOAK=10m $(GO) test ./pkg/exporter -run '^$$' -bench SoakChurn -benchtime 1x -timeout 20m
