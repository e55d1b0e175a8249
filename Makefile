# QueryReplay — the two commands a new machine needs:
#   make demo   run the main job
#   make test   run every test suite
# Both install what they need first (make setup).

GO       ?= go
GOTEST   ?= $(GO) test
BIN      := bin
GPX      := dist/datasource/gpx_queryreplay_linux_amd64
# Our packages, named explicitly: ./... would also walk node_modules, where
# some npm packages ship Go code.
GOPKGS   := ./cmd/... ./internal/... ./pkg/...

.PHONY: all setup build build-frontend build-backend build-cli demo test test-frontend test-go vet lint typecheck check-dist clean

all: build

setup:
	@scripts/setup.sh

build: build-frontend build-backend build-cli

build-frontend: setup
	npm run build

build-backend:
	$(GO) tool mage -v build:linux

build-cli:
	$(GO) build -o $(BIN)/queryreplay ./cmd/queryreplay

demo: build
	@scripts/demo.sh

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
test-go: vet check-dist
	GPX_BINARY=$(CURDIR)/$(GPX) $(GOTEST) -count=1 $(GOPKGS)

test: test-frontend test-go

clean:
	rm -rf dist coverage $(BIN)

# Benchmarks asked for by the issues (not part of make test). The libxml2
# peer needs Debian's python3-lxml.
.PHONY: bench
bench:
	$(GO) test ./pkg/xe -run '^$$' -bench 'Decode|LxmlPeer' -benchtime 3x -cpu 1
	$(GO) test ./pkg/showplan -run '^$$' -bench . -benchtime 5x
	$(GO) test ./pkg/timeline -run '^$$' -bench BuildMillion -benchtime 3x -cpu 1
	$(GO) test ./pkg/pdb -run '^$$' -bench . -benchtime 10x
	$(GO) test ./pkg/plugin -run '^$$' -bench 'View1M' -benchtime 20x
	$(GO) test ./pkg/plugin -run '^$$' -bench 'Trace100k|Store20x100k' -benchtime 1x
