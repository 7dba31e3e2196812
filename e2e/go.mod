module github.com/motionstudio/platform/e2e

go 1.26.8
