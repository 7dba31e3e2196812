// Command mcpstub serves a tiny MCP server (the official Go SDK, streamable HTTP) on 127.0.0.1
// for local walkthroughs: a wiki with read_page (read-only: Low risk) and delete_page (no
// annotations: High risk). Each tool answers "<tool> done: <arguments>" and logs the call. It
// prints its base URL on standard output once it listens; register <URL>/mcp as an MCP server.
//
//	go run ./e2e/cmd/mcpstub -addr 127.0.0.1:0
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address (port 0: any free port)")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "wiki", Version: "1"}, nil)
	type page struct {
		Page string `json:"page"`
	}
	tool := func(name string) func(context.Context, *mcp.CallToolRequest, page) (*mcp.CallToolResult, any, error) {
		return func(_ context.Context, req *mcp.CallToolRequest, _ page) (*mcp.CallToolResult, any, error) {
			log.Printf("mcpstub: %s %s", name, req.Params.Arguments)
			text := name + " done: " + string(req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		}
	}
	mcp.AddTool(server, &mcp.Tool{Name: "read_page", Description: "Read a wiki page.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool("read_page"))
	mcp.AddTool(server, &mcp.Tool{Name: "delete_page", Description: "Delete a wiki page."}, tool("delete_page"))
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.Serve(ln))
}
