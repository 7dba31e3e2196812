// Command modelstub serves a tiny OpenAI-compatible chat-completions endpoint on 127.0.0.1 for
// local walkthroughs: every completion answers at once with a fixed reply. Point a model
// connection's baseUrl at http://<addr>/v1.
//
//	go run ./e2e/cmd/modelstub -addr 127.0.0.1:8090 -reply "Looks good."
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/motionstudio/platform/e2e/modelstub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	reply := flag.String("reply", modelstub.DefaultReply, "the assistant's answer")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: &modelstub.Stub{Reply: *reply}, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("modelstub: chat completions at http://%s/v1/chat/completions", *addr)
	log.Fatal(srv.ListenAndServe())
}
