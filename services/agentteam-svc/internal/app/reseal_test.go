package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/app"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/mcpclient/mcptest"
)

var _ = Describe("rotating the encryption key", Ordered, func() {
	const (
		modelKey = "sk-rotate-0123456789-wxyz"
		mcpToken = "mcp-rotate-token-5150"
	)
	var (
		base               config.Config
		keyA, keyB         string
		model              *modelStub
		mcp                *mcptest.Server
		c                  crew
		conn, server       string
		outputs, adminLogs bytes.Buffer
	)
	withKeys := func(single, ring string) config.Config {
		cfg := base
		cfg.EncryptionKey, cfg.EncryptionKeys = single, ring
		return cfg
	}
	reseal := func(cfg config.Config, ctx context.Context, log *slog.Logger) (map[string]float64, error) {
		GinkgoHelper()
		var out bytes.Buffer
		err := app.Admin(ctx, cfg, log, []string{"reseal", "-batch", "1"}, &out)
		outputs.Write(out.Bytes())
		var m struct {
			KeyID string `json:"key_id"`
			Kinds []struct {
				Kind                 string
				Resealed, Unreadable float64
			}
		}
		Expect(json.Unmarshal(out.Bytes(), &m)).To(Succeed(), out.String())
		Expect(m.KeyID).To(Equal("b"))
		resealed := map[string]float64{}
		for _, k := range m.Kinds {
			resealed[k.Kind] = k.Resealed
			Expect(k.Unreadable).To(BeZero())
		}
		return resealed, err
	}

	BeforeAll(func() {
		// A database and a bus of its own, which the fixtures use while these specs run: the
		// suite's app seals under another key.
		suiteDB, suiteClient := db, client
		DeferCleanup(func() { db, client = suiteDB, suiteClient })
		var dsn string
		db, dsn = testkit.NewDatabase("agentteam_reseal")
		bus := testkit.Bus("agentteam_reseal")
		base = suiteCfg
		base.DB.DSN = dsn
		base.NATS.Prefix = bus.Subject("")
		base.Runs.WorkerConcurrency = 2
		Expect(app.Migrate(context.Background(), base, slog.New(slog.DiscardHandler))).To(Succeed())
		a, b := make([]byte, 32), make([]byte, 32)
		_, _ = rand.Read(a)
		_, _ = rand.Read(b)
		keyA, keyB = base64.StdEncoding.EncodeToString(a), base64.StdEncoding.EncodeToString(b)
		model = newModelStub(answering("Resealed and still running."))
		mcp = mcptest.New(mcpToken)
		DeferCleanup(mcp.Close)
	})

	It("seals a model key and MCP headers under ENCRYPTION_KEY", func() {
		client = serve(withKeys(keyA, ""))
		c = newCrew()
		conn = newConnection(c, model.URL+"/v1", modelKey)
		server = newMCPServer(c, mcp.URL+"/mcp", "Bearer "+mcpToken)
	})

	It("reseals under the new first key, resumes after an interruption, then changes nothing", func() {
		cfg := withKeys("", "b:"+keyB+",default:"+keyA)
		client = serve(cfg)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		first, err := reseal(cfg, ctx, slog.New(testkit.CancelOnLog(slog.NewJSONHandler(&adminLogs, nil), "reseal", cancel)))
		Expect(err).To(MatchError(context.Canceled))
		Expect(first).To(Equal(map[string]float64{"model_keys": 1}))

		log := slog.New(slog.NewJSONHandler(&adminLogs, nil))
		second, err := reseal(cfg, context.Background(), log)
		Expect(err).NotTo(HaveOccurred())
		Expect(second).To(Equal(map[string]float64{"model_keys": 0, "mcp_headers": 1}))
		third, err := reseal(cfg, context.Background(), log)
		Expect(err).NotTo(HaveOccurred())
		Expect(third).To(Equal(map[string]float64{"model_keys": 0, "mcp_headers": 0}))

		for _, secret := range []string{keyA, keyB, modelKey, mcpToken} {
			Expect(outputs.String()).NotTo(ContainSubstring(secret))
			Expect(adminLogs.String()).NotTo(ContainSubstring(secret))
		}
	})

	It("runs an agent with the model key and MCP headers once the old key is removed", func() {
		client = serve(withKeys("", "b:"+keyB))
		t := seedTeam(c, agentSpec{Primary: conn, MCPServers: []string{server}})
		id := t.enqueue()
		Eventually(runStatus(id)).WithTimeout(20 * time.Second).Should(Equal("Completed"))
		r := readRun(id)
		Expect(r.Output).To(Equal("Resealed and still running."))
		Expect(r.Prompt).To(ContainSubstring("Wiki / summarize"), "the MCP headers opened")
		Expect(model.calls()).NotTo(BeEmpty())
		Expect(model.calls()[len(model.calls())-1].Authorization).To(Equal("Bearer " + modelKey))
		Expect(logs.String()).NotTo(ContainSubstring(modelKey))
	})
})
