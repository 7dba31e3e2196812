// Package api embeds the content service's OpenAPI document, the contract its handlers are
// generated from and that it serves at GET /openapi.json.
package api

import _ "embed"

// OpenAPI is api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
