package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/motionstudio/platform/e2e/modelstub"
)

// lookupTool is the bench MCP server's one tool: read-only (risk Low), answering at once.
const lookupTool = "lookup"

// toolCallsPerRun is how many tool calls each bench run makes, one per model turn.
const toolCallsPerRun = 3

// tools measures runs that call tools: it serves a scripted model stub (three turns of one
// lookup call each, then the answer) and an MCP server whose one read-only tool answers at
// once, configures an Autonomous AI seat with both, and queues -n runs at once, then -serial
// runs one at a time. It prints runs per second of the burst and, from the one-by-one runs,
// what the platform adds per step: the run's started-to-finished time over its steps (four
// model calls and three tool calls), with both stubs answering at once, so the loopback round
// trips of the calls count as the platform's.
func tools(ctx context.Context, args []string) error {
	o, err := parseRunFlags("tools", args, 100, 50)
	if err != nil {
		return err
	}
	c := o.client

	script := make([][]modelstub.Call, toolCallsPerRun)
	for i := range script {
		script[i] = []modelstub.Call{{Name: lookupTool, Arguments: fmt.Sprintf(`{"query":"item %d"}`, i)}}
	}
	modelAddr, stopModel, err := serveLocal(&modelstub.Stub{Script: script})
	if err != nil {
		return err
	}
	defer stopModel()
	mcpAddr, stopMCP, err := serveLocal(lookupServer())
	if err != nil {
		return err
	}
	defer stopMCP()

	var conn, server, seat idOnly
	if err := c.post(ctx, "/api/orgboard/model-connections", map[string]any{"organizationId": o.org, "name": "Bench tool stub",
		"baseUrl": "http://" + modelAddr + "/v1", "model": "stub", "apiKey": "sk-bench-tool-stub"}, &conn); err != nil {
		return err
	}
	if err := c.post(ctx, "/api/orgboard/mcp-servers", map[string]any{"organizationId": o.org, "name": "Bench lookup",
		"url": "http://" + mcpAddr + "/mcp"}, &server); err != nil {
		return err
	}
	if err := c.post(ctx, "/api/orgboard/seats", map[string]any{"teamId": o.team, "roleName": "Bench tool agent"}, &seat); err != nil {
		return err
	}
	if err := c.post(ctx, "/api/orgboard/seats/"+seat.ID+"/agent", map[string]any{"name": "Bench tools", "apiConfigId": conn.ID,
		"autonomy": "Autonomous", "mcpServerIds": []string{server.ID}}, nil); err != nil {
		return err
	}
	tasks, err := newTasks(ctx, c, o.team, "Tool run", o.n+o.serial, o.concurrency)
	if err != nil {
		return err
	}
	start, finished, err := burst(ctx, c, seat.ID, tasks[:o.n], o.concurrency)
	if err != nil {
		return err
	}
	last, failed := ended(finished)
	fmt.Printf("%-26s %9.1f runs/s (%d runs at once, %d tool calls each, %d failed)\n",
		"agentteam-tool-runs-burst", float64(len(finished))/last.Sub(start).Seconds(), len(finished), toolCallsPerRun, failed)

	var perStep []time.Duration
	for _, task := range tasks[o.n:] {
		var r idOnly
		if err := c.post(ctx, "/api/assembler/runs", map[string]any{"seatId": seat.ID, "workItemId": task}, &r); err != nil {
			return err
		}
		took, steps, err := runTime(ctx, c, r.ID)
		if err != nil {
			return err
		}
		perStep = append(perStep, took/time.Duration(max(steps, 1)))
	}
	if len(perStep) > 0 {
		fmt.Printf("%-26s %9d runs   platform overhead per step (started to finished / steps, stubs answering at once): p50 %8.3f ms   p99 %8.3f ms (goal p50 < 5 ms)\n",
			"agentteam-tool-steps", len(perStep), pct(perStep, 0.5), pct(perStep, 0.99))
	}
	return nil
}

// runTime waits until the run finished and answers its started-to-finished time and how many
// steps it recorded; a run that did not complete is an error.
func runTime(ctx context.Context, c *apiClient, id string) (time.Duration, int, error) {
	for {
		var got struct {
			Status     string    `json:"status"`
			ErrorCode  string    `json:"errorCode"`
			StartedAt  time.Time `json:"startedAt"`
			FinishedAt time.Time `json:"finishedAt"`
		}
		if err := c.get(ctx, "/api/assembler/runs/"+id, &got); err != nil {
			return 0, 0, err
		}
		switch got.Status {
		case "Completed":
			var steps []struct{}
			if err := c.get(ctx, "/api/assembler/runs/"+id+"/steps?pageSize=100", &steps); err != nil {
				return 0, 0, err
			}
			return got.FinishedAt.Sub(got.StartedAt), len(steps), nil
		case "Failed", "Cancelled":
			return 0, 0, fmt.Errorf("run %s ended %s (%s)", id, got.Status, got.ErrorCode)
		}
		// The service's own timestamps are measured; polling slower only spares the CPU.
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// lookupServer is an MCP server (streamable HTTP at /mcp) with the read-only lookup tool,
// which answers at once.
func lookupServer() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-lookup", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}
	server.AddTool(&mcp.Tool{Name: lookupTool, Description: "Look an item up.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the item is in stock"}}}, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	return mux
}

// serveLocal serves h on a free loopback port and answers its address and the function that
// stops it.
func serveLocal(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() { _ = srv.Close() }, nil
}
