# pid's build. `make demo` shows pid at work; `make test` runs every test.
GO ?= go
BIN := bin

.PHONY: all build test vet demo bench bench-vs-pi clean

all: build

build:
	$(GO) build -o $(BIN)/pid ./cmd/pid

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

clean:
	rm -rf $(BIN)
