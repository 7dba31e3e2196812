module github.com/motionstudio/platform/services/shop-svc

go 1.26.8
