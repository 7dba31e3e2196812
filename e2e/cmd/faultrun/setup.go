package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// tenantsCount is how many identity tenants the registrations and API keys spread over; the
// first tenant has two webhooks (one event fans out to both), the others one each.
const (
	tenantsCount = 4
	scenesCount  = 8
	teamsCount   = 4
)

// fixtures are what the setup phase made for the load to use.
type fixtures struct {
	tenants []tenantFixture
	// opsToken is a platform administrator's token (content and agentteam calls).
	opsToken string
	sceneIDs []string
	seats    []seatFixture
	// webhooks maps each webhook id to its receiver path and tenant.
	webhooks map[string]hookFixture
	// ready is when the setup ended: every later subscribed event goes to the webhooks.
	ready time.Time
}

type hookFixture struct {
	path, tenantID string
}

type tenantFixture struct {
	id, slug, adminToken string
}

type seatFixture struct {
	teamID, seatID string
}

// setup creates the tenants with their administrators and webhooks, a content project with
// scenes, and an agentteam organization whose teams each have a QA seat whose agent answers
// through the model stub.
func setup(ctx context.Context, p *platform, c *client, run, receiverURL, modelURL string) (*fixtures, error) {
	f := &fixtures{webhooks: map[string]hookFixture{}}
	for i := range tenantsCount {
		slug := fmt.Sprintf("ft-%s-%d", run, i+1)
		t, err := p.admin(ctx, "create-tenant", "-slug", slug, "-name", "Fault tenant "+slug, "-email", "ops@"+slug+".test")
		if err != nil {
			return nil, err
		}
		args := []string{"create-user", "-tenant", slug, "-email", "admin@" + slug + ".test", "-password", "correct horse battery", "-tenant-admin"}
		if i == 0 {
			args = append(args, "-platform-admin")
		}
		if _, err := p.admin(ctx, args...); err != nil {
			return nil, err
		}
		tok, err := p.admin(ctx, "token", "-tenant", slug, "-email", "admin@"+slug+".test", "-ttl", "3h")
		if err != nil {
			return nil, err
		}
		tf := tenantFixture{id: fmt.Sprint(t["id"]), slug: slug, adminToken: fmt.Sprint(tok["access_token"])}
		f.tenants = append(f.tenants, tf)
		hooks := 1
		if i == 0 {
			hooks = 2
		}
		for h := range hooks {
			path := fmt.Sprintf("/hooks/t%d-%d", i+1, h+1)
			var created struct {
				ID string `json:"id"`
			}
			err := call(ctx, c, request{svc: p.identity, method: http.MethodPost, path: "/v1/tenants/" + tf.id + "/webhooks", token: tf.adminToken,
				body: jsonBody(map[string]any{"name": "fault run " + path, "url": receiverURL + path,
					"events": []string{"user.registered", "api_key.created", "api_key.revoked"}})}, &created)
			if err != nil {
				return nil, err
			}
			f.webhooks[created.ID] = hookFixture{path: path, tenantID: tf.id}
		}
	}
	f.opsToken = f.tenants[0].adminToken
	if err := setupContent(ctx, p, c, f, run); err != nil {
		return nil, err
	}
	if err := setupAgentteam(ctx, p, c, f, modelURL); err != nil {
		return nil, err
	}
	f.ready = time.Now()
	return f, nil
}

func setupContent(ctx context.Context, p *platform, c *client, f *fixtures, run string) error {
	var container, project struct {
		ID string `json:"id"`
	}
	if err := call(ctx, c, request{svc: p.content, method: http.MethodPost, path: "/v1/containers", token: f.opsToken,
		body: jsonBody(map[string]any{"slug": "fault-" + run, "name": "Fault run", "primary_mode": "video", "keywords": "fault"})}, &container); err != nil {
		return err
	}
	if err := call(ctx, c, request{svc: p.content, method: http.MethodPost, path: "/v1/projects", token: f.opsToken,
		body: jsonBody(map[string]any{"container_id": container.ID, "name": "Landscape", "aspect": "16:9", "original_width": 1920,
			"original_height": 1080, "project_duration_sec": 30, "choose_mode": "scene"})}, &project); err != nil {
		return err
	}
	for i := range scenesCount {
		var scene struct {
			ID string `json:"id"`
		}
		if err := call(ctx, c, request{svc: p.content, method: http.MethodPost, path: "/v1/projects/" + project.ID + "/scenes", token: f.opsToken,
			body: jsonBody(map[string]any{"key": fmt.Sprintf("scene-%d", i+1), "title": fmt.Sprintf("Scene %d", i+1)})}, &scene); err != nil {
			return err
		}
		f.sceneIDs = append(f.sceneIDs, scene.ID)
	}
	return nil
}

func setupAgentteam(ctx context.Context, p *platform, c *client, f *fixtures, modelURL string) error {
	orgID := uuid.NewString()
	post := func(path string, body, out any) error {
		return call(ctx, c, request{svc: p.agentteam, method: http.MethodPost, path: path, token: f.opsToken, body: jsonBody(body)}, out)
	}
	type record struct {
		ID string `json:"id"`
	}
	if err := post("/api/orgboard/organizations", map[string]any{"organizationId": orgID, "name": "Fault run"}, nil); err != nil {
		return err
	}
	var conn record
	if err := post("/api/orgboard/model-connections", map[string]any{
		"organizationId": orgID, "name": "Model stub", "baseUrl": modelURL + "/v1", "model": "stub", "apiKey": "sk-fault-run-stub-key",
	}, &conn); err != nil {
		return err
	}
	for i := range teamsCount {
		var team, seat record
		if err := post("/api/orgboard/teams", map[string]any{"organizationId": orgID, "name": fmt.Sprintf("Team %d", i+1)}, &team); err != nil {
			return err
		}
		if err := post("/api/orgboard/seats", map[string]any{"teamId": team.ID, "roleName": "QA"}, &seat); err != nil {
			return err
		}
		if err := post("/api/orgboard/seats/"+seat.ID+"/agent", map[string]any{
			"name": fmt.Sprintf("Quinn %d", i+1), "monogram": "QN", "autonomy": "Suggest", "apiConfigId": conn.ID,
			"skillKeys": []string{}, "docs": []string{}, "persona": "Check every acceptance criterion.",
		}, nil); err != nil {
			return err
		}
		f.seats = append(f.seats, seatFixture{teamID: team.ID, seatID: seat.ID})
	}
	return nil
}

// call sends a setup request and decodes its 2xx answer into out (when not nil).
func call(ctx context.Context, c *client, req request, out any) error {
	res, err := c.do(ctx, 0, req)
	if err != nil {
		return err
	}
	if res.code < 200 || res.code >= 300 {
		return fmt.Errorf("%s %s: %d %s", req.method, req.path, res.code, res.body)
	}
	if out == nil {
		return nil
	}
	if err := res.decode(out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", req.method, req.path, err)
	}
	return nil
}
