# The queryreplay CLI for the compose stack's exporter service, built from
# this checkout (docker-compose.yaml: build context is the repository root).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY pkg ./pkg
RUN CGO_ENABLED=0 go build -trimpath -o /out/queryreplay ./cmd/queryreplay

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/queryreplay /usr/local/bin/queryreplay
USER nonroot
EXPOSE 10617
ENTRYPOINT ["/usr/local/bin/queryreplay"]
