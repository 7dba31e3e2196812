// Command modelstub serves a tiny OpenAI-compatible chat-completions endpoint on 127.0.0.1 for
// local walkthroughs: every completion answers at once with a fixed reply, after the tool calls
// of -script, if given (a JSON list of turns, each a list of {"name", "arguments"}; see
// modelstub.Stub.Script). Point a model connection's baseUrl at http://<addr>/v1.
//
//	go run ./e2e/cmd/modelstub -addr 127.0.0.1:8090 -reply "Looks good."
//	go run ./e2e/cmd/modelstub -script '[[{"name":"read_page","arguments":"{}"}]]' -reply "Read it."
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/motionstudio/platform/e2e/modelstub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	reply := flag.String("reply", modelstub.DefaultReply, "the assistant's answer")
	script := flag.String("script", "", `the tool calls to ask for before answering, turn by turn: [[{"name":"…","arguments":"{…}"}], …]`)
	flag.Parse()
	stub := &modelstub.Stub{Reply: *reply}
	if *script != "" {
		if err := json.Unmarshal([]byte(*script), &stub.Script); err != nil {
			log.Fatalf("modelstub: -script is not a JSON list of turns of calls: %v", err)
		}
	}
	srv := &http.Server{Addr: *addr, Handler: stub, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("modelstub: chat completions at http://%s/v1/chat/completions", *addr)
	log.Fatal(srv.ListenAndServe())
}
