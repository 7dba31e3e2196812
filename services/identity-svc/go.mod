module github.com/motionstudio/platform/services/identity-svc

go 1.26.8
