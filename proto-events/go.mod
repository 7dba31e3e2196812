module github.com/motionstudio/platform/proto-events

go 1.26.8
