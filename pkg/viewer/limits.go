package viewer

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/queryreplay/queryreplay/pkg/sizelimit"
)

// bodyLimit is the bound of a request body or an uploaded bundle file.
func (s *Server) bodyLimit(what string) sizelimit.Error {
	n := s.cfg.MaxRequestBytes
	if n <= 0 {
		n = MaxRequestBytes
	}
	return sizelimit.Error{What: what, Limit: n, Knob: s.cfg.MaxRequestKnob}
}

// readBody reads a request body within the limit; http.MaxBytesReader
// also makes the server close the connection instead of draining the rest.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.bodyLimit("the request body")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit.Limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &limit
	}
	if err != nil {
		return nil, fmt.Errorf("read the request body: %w", err)
	}
	return body, nil
}

// readFile reads a bundle file within the limit, refusing a larger one by
// its size before reading it.
func (s *Server) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := s.bodyLimit("bundle file " + path)
	if st, err := f.Stat(); err == nil {
		if err := sizelimit.Check(st.Size(), limit); err != nil {
			return nil, err
		}
	}
	return sizelimit.ReadAll(f, limit)
}

// bodyStatus is 413 for a body over the limit, else 400.
func bodyStatus(err error) int {
	if errors.Is(err, sizelimit.ErrTooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
