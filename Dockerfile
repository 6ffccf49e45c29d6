# syntax=docker/dockerfile:1
# The tasksim image: one static binary (CGO off: no libc, no loader) on distroless static,
# which has no shell and no package manager, run as the non-root user 65532. From the
# repository's root:
#   docker build -t ghcr.io/tasksim/tasksim:0.1.0 .
# deploy/kubernetes/kustomization.yaml names the image the Jobs run. A test
# (cmd/tasksim/deploy_test.go) runs this file's go build line and checks that the binary is
# static and runs; the image itself is not built by the tests.
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/tasksim ./cmd/tasksim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tasksim /tasksim
USER 65532:65532
ENTRYPOINT ["/tasksim"]
