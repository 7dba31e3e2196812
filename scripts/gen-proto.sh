#!/usr/bin/env bash
# gen-proto.sh regenerates the Go code of the event schemas in proto-events/, and the
# services' AsyncAPI documents (proto-events/asyncapi/<service>.json) from the catalogue and the
# .proto sources (proto-events/cmd/asyncapigen).
#
# It installs protoc (Debian's protobuf-compiler) when missing, installs
# protoc-gen-go into <repo>/.bin at the google.golang.org/protobuf version that
# proto-events/go.mod requires, and rewrites proto-events/gen/ from
# proto-events/proto/. The output is deterministic, so running it twice leaves
# `git diff --exit-code` clean. The protoc version is part of the generated
# headers; CI and local development both use Debian's protoc 3.21.12.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$repo/proto-events"
module_path="github.com/motionstudio/platform/proto-events"
proto_dir="$module_dir/proto"
bin_dir="$repo/.bin"
want_protoc="3.21.12"

# out is the temporary output directory, global so the EXIT trap sees it.
out=""

log() { printf 'gen-proto: %s\n' "$*" >&2; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		log "need root to run: $*"
		exit 1
	fi
}

# ensure_protoc installs protoc and the well-known types it imports
# (google/protobuf/timestamp.proto lives in libprotobuf-dev) when missing.
ensure_protoc() {
	if command -v protoc >/dev/null 2>&1 && include_dir >/dev/null 2>&1; then
		return
	fi
	log "installing protoc (protobuf-compiler, libprotobuf-dev)"
	local candidate
	candidate="$(apt-cache policy protobuf-compiler 2>/dev/null | awk '/Candidate:/ {print $2}')"
	if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
		as_root apt-get update
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y protobuf-compiler libprotobuf-dev
}

# protobuf_version prints the google.golang.org/protobuf version required by
# proto-events/go.mod, in either require form.
protobuf_version() {
	awk '
		$1 == "require" && $2 == "google.golang.org/protobuf" { print $3; exit }
		$1 == "google.golang.org/protobuf" { print $2; exit }
	' "$module_dir/go.mod"
}

ensure_protoc_gen_go() {
	local version="$1" have=""
	if [ -x "$bin_dir/protoc-gen-go" ]; then
		have="$("$bin_dir/protoc-gen-go" --version 2>/dev/null | awk '{print $2}')"
	fi
	if [ "$have" = "$version" ]; then
		return
	fi
	log "installing protoc-gen-go $version into $bin_dir"
	mkdir -p "$bin_dir"
	GOBIN="$bin_dir" GOWORK=off go install "google.golang.org/protobuf/cmd/protoc-gen-go@$version"
}

# include_dir prints the directory holding google/protobuf/timestamp.proto.
include_dir() {
	local dir
	local protoc_path
	protoc_path="$(command -v protoc || true)"
	for dir in /usr/include /usr/local/include ${protoc_path:+"$(dirname "$protoc_path")/../include"}; do
		if [ -f "$dir/google/protobuf/timestamp.proto" ]; then
			printf '%s\n' "$dir"
			return
		fi
	done
	log "google/protobuf/timestamp.proto not found; install libprotobuf-dev"
	return 1
}

main() {
	ensure_protoc
	local have_protoc
	have_protoc="$(protoc --version | awk '{print $2}')"
	if [ "$have_protoc" != "$want_protoc" ]; then
		log "warning: protoc $have_protoc differs from $want_protoc; generated headers will differ from CI"
	fi

	local version
	version="$(protobuf_version)"
	if [ -z "$version" ]; then
		log "proto-events/go.mod does not require google.golang.org/protobuf"
		exit 1
	fi
	ensure_protoc_gen_go "$version"

	local includes
	includes="$(include_dir)"
	out="$(mktemp -d)"
	trap 'rm -rf "$out"' EXIT

	local files=()
	mapfile -t files < <(cd "$proto_dir" && find . -name '*.proto' -printf '%P\n' | LC_ALL=C sort)
	if [ "${#files[@]}" -eq 0 ]; then
		log "no .proto files under $proto_dir"
		exit 1
	fi

	# module= maps each go_package (.../proto-events/gen/<svc>/v1) to
	# gen/<svc>/v1 in the module, whatever the .proto file's own path is.
	(cd "$proto_dir" && protoc \
		--proto_path=. \
		--proto_path="$includes" \
		--plugin=protoc-gen-go="$bin_dir/protoc-gen-go" \
		--go_out="$out" \
		--go_opt=module="$module_path" \
		--include_imports --include_source_info --descriptor_set_out="$out/descriptors.binpb" \
		"${files[@]}")

	# Only generated files are replaced: the hand-written doc.go of each
	# package stays, and .pb.go files whose .proto is gone disappear.
	mkdir -p "$module_dir/gen"
	find "$module_dir/gen" -name '*.pb.go' -delete
	(cd "$out/gen" && find . -name '*.pb.go' -printf '%P\n') | while read -r file; do
		mkdir -p "$module_dir/gen/$(dirname "$file")"
		mv "$out/gen/$file" "$module_dir/gen/$file"
	done
	find "$module_dir/gen" -mindepth 1 -type d -empty -delete
	log "generated $(find "$module_dir/gen" -name '*.pb.go' | wc -l) files in proto-events/gen"

	# The generator compiles against the code just written, so it runs last.
	(cd "$repo" && go run ./proto-events/cmd/asyncapigen -descriptors "$out/descriptors.binpb" -out "$module_dir/asyncapi")
	log "generated the AsyncAPI documents in proto-events/asyncapi"
}

main "$@"
