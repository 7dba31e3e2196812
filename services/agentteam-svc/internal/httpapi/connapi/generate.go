package connapi

//go:generate oapi-codegen -config oapi-codegen.yaml ../../../api/openapi.yaml
