package memoryapi

//go:generate oapi-codegen -config oapi-codegen.yaml ../../../api/openapi.yaml
