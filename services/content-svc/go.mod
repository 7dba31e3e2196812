module github.com/motionstudio/platform/services/content-svc

go 1.26.8
