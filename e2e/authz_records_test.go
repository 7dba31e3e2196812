package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/image/font/gofont/goregular"
)

// fixture is one record of tenant A (or of an organization A's administrator owns) that a
// matrix row attacks, built fresh for the row by the record type's builder below.
type fixture struct {
	ids     map[string]string // the record's ids by parameter or body field name
	foreign map[string]string // the same names for the stranger's own records, for mixed-id attempts
	marker  string            // text only this record holds: no refused answer may contain it
	owner   principal         // whose record it is; the row's own call is made as them
	peer    principal         // a plain user (or Member) beside the owner
	read    func() (int, []byte)
}

// with adds ids (name, value pairs) to the fixture.
func (f *fixture) with(kv ...string) *fixture {
	for i := 0; i+1 < len(kv); i += 2 {
		f.ids[kv[i]] = kv[i+1]
	}
	return f
}

// decode reads a JSON object answer.
func decode(body []byte) map[string]any {
	GinkgoHelper()
	var out map[string]any
	Expect(json.Unmarshal(body, &out)).To(Succeed(), string(body))
	return out
}

func str(m map[string]any, k string) string {
	GinkgoHelper()
	v, ok := m[k].(string)
	Expect(ok).To(BeTrue(), "%q in %v", k, m)
	return v
}

// --- identity-svc -------------------------------------------------------------------------

// tenantOfA is tenant A itself, managed by its administrator.
func tenantOfA(w *authzWorld) *fixture {
	return &fixture{
		ids:     map[string]string{"tenant_id": w.a.tenantID, "slug": w.a.slug},
		foreign: map[string]string{"tenant_id": w.b.tenantID},
		marker:  w.a.name, owner: w.a.admin, peer: w.a.member,
		read: reader(identity, "/v1/tenants/"+w.a.tenantID, w.a.admin.token),
	}
}

func brandingOfA(w *authzWorld) *fixture {
	f := tenantOfA(w)
	f.read = reader(identity, "/v1/tenants/"+w.a.tenantID+"/branding", w.a.admin.token)
	return f
}

func apiKeyOfA(w *authzWorld) *fixture {
	f := tenantOfA(w)
	f.marker = "key " + marker()
	out := w.must(identity, "POST", "/v1/tenants/"+w.a.tenantID+"/api-keys", w.a.admin.token,
		map[string]any{"name": f.marker, "scopes": []string{"renders:read"}})
	f.read = reader(identity, "/v1/tenants/"+w.a.tenantID+"/api-keys", w.a.admin.token)
	return f.with("api_key_id", str(out, "id"))
}

func webhookOfA(w *authzWorld) *fixture {
	f := tenantOfA(w)
	f.marker = "hook " + marker()
	out := w.must(identity, "POST", "/v1/tenants/"+w.a.tenantID+"/webhooks", w.a.admin.token,
		map[string]any{"name": f.marker, "url": "http://127.0.0.1:9/authz", "events": []string{"user.registered"}})
	f.read = reader(identity, "/v1/tenants/"+w.a.tenantID+"/webhooks", w.a.admin.token)
	return f.with("webhook_id", str(out, "id"))
}

// userOfA is tenant A's administrator as a user record, read by the tenant's administration.
func userOfA(w *authzWorld) *fixture {
	return &fixture{
		ids:    map[string]string{"user_id": w.a.admin.id, "tenant_id": w.a.tenantID},
		marker: "admin@" + w.a.slug + ".test", owner: w.a.admin, peer: w.a.member,
		read: reader(identity, "/v1/users/"+w.a.admin.id, w.a.admin.token),
	}
}

// freshUserOfA is a new user of tenant A, for the rows whose own call changes the user.
func freshUserOfA(w *authzWorld) *fixture {
	email := "user-" + marker() + "@" + w.a.slug + ".test"
	out := admin("create-user", "-tenant", w.a.slug, "-email", email, "-password", w.a.password, "-name", "Fresh")
	return &fixture{
		ids:    map[string]string{"user_id": str(out, "id")},
		marker: email, owner: w.a.admin, peer: w.a.member,
		read: reader(identity, "/v1/users/"+str(out, "id"), w.a.admin.token),
	}
}

// sessionOfA is a login session of tenant A's administrator.
func sessionOfA(w *authzWorld) *fixture {
	device := "device " + marker()
	out := w.must(identity, "POST", "/v1/auth/login", "", map[string]any{
		"tenant_slug": w.a.slug, "email": "admin@" + w.a.slug + ".test", "password": w.a.password, "device_name": device,
	})
	return &fixture{
		ids:    map[string]string{"session_id": sessionID(str(out, "access_token"))},
		marker: device, owner: w.a.admin, peer: w.a.member,
		read: reader(identity, "/v1/auth/sessions", w.a.admin.token),
	}
}

// mfaFactorOfA is an unverified TOTP factor of tenant A's plain user; the attempts send a valid
// code for it.
func mfaFactorOfA(w *authzWorld) *fixture {
	label := "factor " + marker()
	out := w.must(identity, "POST", "/v1/auth/mfa/setup", w.a.member.token, map[string]any{"factor_type": "TOTP", "label": label})
	return &fixture{
		ids:    map[string]string{"factor_id": str(out, "factor_id"), "totp_secret": str(out, "secret")},
		marker: str(out, "secret"), owner: w.a.member, peer: w.a.admin,
	}
}

// planOfA is a free plan of tenant A's catalogue; plans are seeded by operators with SQL.
func planOfA(w *authzWorld) *fixture {
	id, name := uuid.NewString(), "Plan "+marker()
	w.exec(`INSERT INTO plans (id, tenant_id, code, name, currency, price_minor) VALUES (?, ?, ?, ?, 'USD', 0)`,
		id, w.a.tenantID, "authz-"+marker(), name)
	return &fixture{
		ids:    map[string]string{"plan_id": id},
		marker: name, owner: w.a.member, peer: w.a.admin,
		read: reader(identity, "/v1/plans/"+id, w.a.member.token),
	}
}

// paymentOfA is tenant A's plain user's payment for a free plan, settled from the balance.
func paymentOfA(w *authzWorld) *fixture {
	f := planOfA(w)
	out := w.must(identity, "POST", "/v1/users/me/plan/purchase", w.a.member.token,
		map[string]any{"plan_id": f.ids["plan_id"], "gateway": "Balance"})
	f.read = reader(identity, "/v1/payments/"+str(out, "payment_id"), w.a.member.token)
	return f.with("payment_id", str(out, "payment_id"))
}

func questOfA(w *authzWorld) *fixture {
	id, title := uuid.NewString(), "Quest "+marker()
	w.exec(`INSERT INTO quests (id, tenant_id, title, quest_type, trigger, target_count, prize_type, prize_amount)
		VALUES (?, ?, ?, 'OneTime', 'payment.confirmed', 1000, 'Balance', 100)`, id, w.a.tenantID, title)
	return &fixture{
		ids:    map[string]string{"quest_id": id},
		marker: title, owner: w.a.member, peer: w.a.admin,
		read: reader(identity, "/v1/quests", w.a.member.token),
	}
}

// earnedGiftOfA is a gift tenant A's plain user earned (seeded, as quest prizes are).
func earnedGiftOfA(w *authzWorld) *fixture {
	gift, earned, name := uuid.NewString(), uuid.NewString(), "Gift "+marker()
	w.exec(`INSERT INTO gifts (id, tenant_id, name, prize_type, value) VALUES (?, ?, ?, 'DailyRenders', 1)`, gift, w.a.tenantID, name)
	w.exec(`INSERT INTO earned_gifts (id, gift_id, tenant_id, user_id) VALUES (?, ?, ?, ?)`, earned, gift, w.a.tenantID, w.a.member.id)
	return &fixture{
		ids:    map[string]string{"earned_gift_id": earned},
		marker: name, owner: w.a.member, peer: w.a.admin,
		read: reader(identity, "/v1/gifts/earned", w.a.member.token),
	}
}

// discountOfA is a discount code of tenant A, with the ids a discount may name (its owner user
// and the plans it applies to).
func discountOfA(w *authzWorld) *fixture {
	f := planOfA(w)
	name := "Discount " + marker()
	code := strings.ToUpper("AUTHZ" + marker())
	w.must(identity, "POST", "/v1/discounts", w.a.admin.token, map[string]any{"name": name, "code": code, "kind": "Percentage", "value": 10})
	f.marker, f.owner, f.peer = name, w.a.admin, w.a.member
	f.read = reader(identity, "/v1/discounts", w.a.admin.token)
	theirs := uuid.NewString()
	w.exec(`INSERT INTO plans (id, tenant_id, code, name, currency, price_minor) VALUES (?, ?, ?, 'Their plan', 'USD', 0)`,
		theirs, w.b.tenantID, "authz-"+marker())
	f.foreign = map[string]string{"plan_id": theirs}
	return f.with("code", code, "owner_user_id", w.a.member.id, "applies_to_plan_ids", f.ids["plan_id"])
}

// avatarLibrary is a picture of the platform's avatar library, which every user may pick.
func avatarLibrary(w *authzWorld) *fixture {
	return &fixture{
		ids:    map[string]string{"avatar_id": "01930000-0000-7000-8000-000000000001"},
		marker: "avatars/library/01.png", owner: w.a.member, peer: w.a.admin,
	}
}

// --- content-svc --------------------------------------------------------------------------
// The catalog is the platform's: a platform administrator owns every record; tenant A's plain
// user and tenant B's administrator are neither platform administrators.

func contentFixture(w *authzWorld, name string) *fixture {
	return &fixture{ids: map[string]string{}, marker: name, owner: w.platform, peer: w.a.member}
}

// containerOfA is an unpublished template in its own category and tag.
func containerOfA(w *authzWorld) *fixture {
	m := marker()
	f := contentFixture(w, "Template "+m)
	cat := w.must(content, "POST", "/v1/categories", w.platform.token, map[string]any{"name": "Category " + m})
	tag := w.must(content, "POST", "/v1/tags", w.platform.token, map[string]any{"name": "Tag " + m})
	out := w.must(content, "POST", "/v1/containers", w.platform.token, map[string]any{
		"slug": "authz-" + m, "name": f.marker, "primary_mode": "video",
		"category_ids": []string{str(cat, "id")}, "tag_ids": []string{str(tag, "id")},
	})
	f.read = reader(content, "/v1/templates/"+str(out, "id"), w.platform.token)
	return f.with("container_id", str(out, "id"), "slug_or_id", str(out, "id"),
		"category_id", str(cat, "id"), "category_ids", str(cat, "id"), "tag_ids", str(tag, "id"))
}

// publishedContainerOfA is a published template.
func publishedContainerOfA(w *authzWorld) *fixture {
	f := containerOfA(w)
	w.must(content, "POST", "/v1/containers/"+f.ids["container_id"]+"/publish", w.platform.token, nil)
	return f
}

// draftProjectInPublishedContainer is a published template with an unpublished project, the
// project's name the marker: the catalog may show the template, never the draft.
func draftProjectInPublishedContainer(w *authzWorld) *fixture {
	f := publishedContainerOfA(w)
	f.marker = "Draft project " + marker()
	w.newProject(f, f.marker, false)
	return f
}

// relatedDraftOfA is a published template beside an unpublished one in the same category, the
// draft's name the marker: related templates may list the one, never the other.
func relatedDraftOfA(w *authzWorld) *fixture {
	f := publishedContainerOfA(w)
	f.marker = "Draft template " + marker()
	w.must(content, "POST", "/v1/containers", w.platform.token, map[string]any{
		"slug": "authz-draft-" + marker(), "name": f.marker, "primary_mode": "video",
		"category_ids": []string{f.ids["category_id"]}, "tag_ids": []string{f.ids["tag_ids"]},
	})
	return f
}

func (w *authzWorld) newProject(f *fixture, name string, published bool) string {
	GinkgoHelper()
	out := w.must(content, "POST", "/v1/projects", w.platform.token, map[string]any{
		"container_id": f.ids["container_id"], "name": name, "original_width": 1920, "original_height": 1080,
		"project_duration_sec": 10, "choose_mode": "auto", "is_published": published,
	})
	return str(out, "id")
}

// projectOfA is an unpublished project of a published template; its editor graph is the read.
func projectOfA(w *authzWorld) *fixture {
	f := publishedContainerOfA(w)
	f.marker = "Project " + marker()
	id := w.newProject(f, f.marker, false)
	f.read = reader(content, "/v1/projects/"+id+"/full", w.platform.token)
	return f.with("project_id", id)
}

func serverOfA(w *authzWorld) *fixture {
	f := contentFixture(w, "Render server "+marker())
	out := w.must(content, "POST", "/v1/project-servers", w.platform.token, map[string]any{"name": f.marker, "base_url": "https://render.example.test"})
	f.read = reader(content, "/v1/project-servers/"+str(out, "id"), w.platform.token)
	return f.with("server_id", str(out, "id"), "project_server_id", str(out, "id"))
}

// projectPartsOfA is a template with a render server, for creating a project that names both.
func projectPartsOfA(w *authzWorld) *fixture {
	f := publishedContainerOfA(w)
	s := serverOfA(w)
	return f.with("project_server_id", s.ids["project_server_id"])
}

func sceneOfA(w *authzWorld) *fixture {
	f := projectOfA(w)
	f.marker = "Scene " + marker()
	out := w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/scenes", w.platform.token, map[string]any{"key": "s" + marker(), "title": f.marker})
	return f.with("scene_id", str(out, "id"))
}

func contentElementOfA(w *authzWorld) *fixture {
	f := sceneOfA(w)
	f.marker = "Content " + marker()
	out := w.must(content, "POST", "/v1/scenes/"+f.ids["scene_id"]+"/contents", w.platform.token, map[string]any{"key": "c" + marker(), "label": f.marker})
	return f.with("element_id", str(out, "id"))
}

func colorElementOfA(w *authzWorld) *fixture {
	f := sceneOfA(w)
	f.marker = "Color " + marker()
	out := w.must(content, "POST", "/v1/scenes/"+f.ids["scene_id"]+"/colors", w.platform.token,
		map[string]any{"key": "k" + marker(), "label": f.marker, "default_color": "#112233"})
	return f.with("element_id", str(out, "id"))
}

// sharedPartsOfA is a scene whose project has a shared layer and a shared color, for element
// writes that link them.
func sharedPartsOfA(w *authzWorld) *fixture {
	f := sceneOfA(w)
	layer := w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/shared-layers", w.platform.token, map[string]any{"key": "l" + marker(), "label": "Layer"})
	color := w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/shared-colors", w.platform.token,
		map[string]any{"key": "c" + marker(), "label": "Color", "color": "#445566"})
	return f.with("shared_layer_id", str(layer, "id"), "shared_color_id", str(color, "id"))
}

func sharedLayerOfA(w *authzWorld) *fixture {
	f := projectOfA(w)
	f.marker = "Layer " + marker()
	w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/shared-layers", w.platform.token, map[string]any{"key": "l" + marker(), "label": f.marker})
	return f
}

func sharedColorOfA(w *authzWorld) *fixture {
	f := projectOfA(w)
	f.marker = "Shared color " + marker()
	w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/shared-colors", w.platform.token,
		map[string]any{"key": "c" + marker(), "label": f.marker, "color": "#445566"})
	return f
}

func presetStoryOfA(w *authzWorld) *fixture {
	f := projectOfA(w)
	f.marker = "Story " + marker()
	out := w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/preset-stories", w.platform.token, map[string]any{"name": f.marker})
	return f.with("preset_story_id", str(out, "id"))
}

// previewOfA is an SVG preview of an unpublished project's scene; the marker is its image URL.
func previewOfA(w *authzWorld) *fixture {
	f := colorElementOfA(w)
	code, answer := content.send("POST", "/v1/svg-previews/generate", nil, w.platform.token, form{
		fields: map[string]string{"target_type": "scene", "target_id": f.ids["scene_id"]},
		files:  map[string][]byte{"image": tinyPNG()},
	})
	Expect(code).To(Equal(202), string(answer))
	id := str(decode(answer), "svg_preview_id")
	f.read = reader(content, "/v1/svg-previews/"+id, w.platform.token)
	_, body := f.read()
	f.marker = str(decode(body), "image_url")
	return f.with("svg_preview_id", id, "target_id", f.ids["scene_id"])
}

func aepUploadOfA(w *authzWorld) *fixture {
	f := projectOfA(w)
	out := w.must(content, "POST", "/v1/projects/"+f.ids["project_id"]+"/aep/start-upload", w.platform.token,
		map[string]any{"filename": "authz.aep", "total_size_bytes": 300_000_000})
	return f.with("upload_id", str(out, "upload_id"))
}

func fontOfA(w *authzWorld) *fixture {
	f := contentFixture(w, "Font "+marker())
	code, answer := content.send("POST", "/v1/fonts", nil, w.platform.token, form{
		fields: map[string]string{"name": f.marker, "family": "Authz"},
		files:  map[string][]byte{"file": goregular.TTF},
	})
	Expect(code).To(Equal(201), string(answer))
	f.read = reader(content, "/v1/fonts", w.platform.token)
	return f.with("font_id", str(decode(answer), "id"))
}

func blogOfA(w *authzWorld, published bool) *fixture {
	f := contentFixture(w, "Post "+marker())
	slug := "authz-" + marker()
	out := w.must(content, "POST", "/v1/blogs", w.platform.token, map[string]any{
		"slug": slug, "title": f.marker, "body": "Body of " + f.marker, "is_published": published,
	})
	f.read = reader(content, "/v1/blogs/"+slug, w.platform.token)
	return f.with("slug", slug, "blog_id", str(out, "id"))
}

func publishedBlogOfA(w *authzWorld) *fixture { return blogOfA(w, true) }
func draftBlogOfA(w *authzWorld) *fixture     { return blogOfA(w, false) }

// pendingCommentOfA is tenant A's plain user's comment on a post, awaiting approval.
func pendingCommentOfA(w *authzWorld) *fixture {
	f := publishedBlogOfA(w)
	f.marker = "Comment " + marker()
	out := w.must(content, "POST", "/v1/comments", w.a.member.token, map[string]any{"content": f.marker, "blog_id": f.ids["blog_id"]})
	f.read = reader(content, "/v1/comments/pending", w.platform.token)
	return f.with("comment_id", str(out, "id"), "parent_comment_id", str(out, "id"))
}

func slideOfA(w *authzWorld) *fixture {
	f := contentFixture(w, "Slide "+marker())
	out := w.must(content, "POST", "/v1/slides", w.platform.token, map[string]any{"title": f.marker, "image_url": "https://cdn.example.test/s.png", "is_active": true})
	f.read = reader(content, "/v1/slides", w.platform.token)
	return f.with("slide_id", str(out, "id"))
}

func homeEventOfA(w *authzWorld) *fixture {
	f := contentFixture(w, "Event "+marker())
	out := w.must(content, "POST", "/v1/home-events", w.platform.token,
		map[string]any{"title": f.marker, "starts_at": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})
	f.read = reader(content, "/v1/home-events", w.platform.token)
	return f.with("event_id", str(out, "id"))
}

// settingsOfA are tenant A's website settings with a private part.
func settingsOfA(w *authzWorld) *fixture {
	f := contentFixture(w, "private "+marker())
	path := "/v1/settings?tenant_id=" + w.a.tenantID
	w.must(content, "PUT", path, w.platform.token, map[string]any{"public": map[string]any{"greeting": "hello"}, "private": map[string]any{"note": f.marker}})
	f.read = reader(content, "/v1/settings/full?tenant_id="+w.a.tenantID, w.platform.token)
	return f.with("tenant_id", w.a.tenantID)
}

// favoritesOfA is tenant A's plain user's favorites folder holding a published template.
func favoritesOfA(w *authzWorld) *fixture {
	f := publishedContainerOfA(w)
	f.marker, f.owner, f.peer = "Folder "+marker(), w.a.member, w.a.admin
	folder := w.must(content, "POST", "/v1/favorites/folders", w.a.member.token, map[string]any{"name": f.marker})
	w.must(content, "POST", "/v1/favorites/containers", w.a.member.token,
		map[string]any{"container_id": f.ids["container_id"], "folder_id": str(folder, "id"), "note": f.marker})
	f.read = reader(content, "/v1/favorites/containers?folder_id="+str(folder, "id"), w.a.member.token)
	return f.with("folder_id", str(folder, "id"))
}

// tinyPNG is a 4×4 PNG.
func tinyPNG() []byte {
	GinkgoHelper()
	var buf bytes.Buffer
	Expect(png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4)))).To(Succeed())
	return buf.Bytes()
}

// aepBytes start like an After Effects project (RIFX, form Egg!).
func aepBytes() []byte { return append([]byte("RIFX\x00\x00\x00\x40Egg!"), make([]byte, 64)...) }

// --- agentteam-svc ------------------------------------------------------------------------
// Each row gets new organizations: A's administrator owns one with A's plain user as a Member,
// B's administrator owns another (the stranger's) with B's plain user as a Member.

// newOrg makes an organization owned by pa's administrator with pa's user as a Member.
func (w *authzWorld) newOrg(pa party) (id, name string) {
	GinkgoHelper()
	id, name = uuid.NewString(), "Org "+marker()
	w.must(agentteam, "POST", "/api/orgboard/organizations", pa.admin.token, map[string]any{"organizationId": id, "name": name})
	inv := w.must(agentteam, "POST", "/api/orgboard/invitations", pa.admin.token, map[string]any{"organizationId": id, "role": "Member"})
	w.must(agentteam, "POST", "/api/orgboard/invitations/accept", pa.member.token, map[string]any{"joinToken": str(inv, "joinToken")})
	return id, name
}

func orgOfA(w *authzWorld) *fixture {
	a, name := w.newOrg(w.a)
	b, _ := w.newOrg(w.b)
	return &fixture{
		ids:     map[string]string{"organizationId": a},
		foreign: map[string]string{"organizationId": b, "memberId": w.b.member.id},
		marker:  name, owner: w.a.admin, peer: w.a.member,
		read: organizationsOf(w.a.admin.token),
	}
}

// organizationsOf reads every page of the caller's organizations (oldest membership first, at
// most 100 a page): A's administrator joins an organization for many rows of the matrix, so
// the newest is past the first page.
func organizationsOf(token string) func() (int, []byte) {
	return func() (int, []byte) {
		var all []byte
		for page := 1; ; page++ {
			code, body := agentteam.send("GET", fmt.Sprintf("/api/orgboard/organizations?page=%d&pageSize=100", page), nil, token, nil)
			if code != http.StatusOK {
				return code, body
			}
			var rows []json.RawMessage
			if err := json.Unmarshal(body, &rows); err != nil {
				return code, body
			}
			all = append(all, body...)
			if len(rows) < 100 {
				return code, all
			}
		}
	}
}

// create posts as the owner (A's administrator, or B's for the stranger's records) and answers
// the new record's id.
func (w *authzWorld) create(as principal, path string, body map[string]any) string {
	GinkgoHelper()
	return str(w.must(agentteam, "POST", path, as.token, body), "id")
}

func teamOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	f.marker = "Team " + marker()
	team := w.create(w.a.admin, "/api/orgboard/teams", map[string]any{"organizationId": f.ids["organizationId"], "name": f.marker})
	f.foreign["teamId"] = w.create(w.b.admin, "/api/orgboard/teams", map[string]any{"organizationId": f.foreign["organizationId"], "name": "Their team"})
	f.read = reader(agentteam, "/api/orgboard/teams?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("teamId", team)
}

// addTasks adds a task titled title to A's team and one to B's (the foreign workItemId).
func (w *authzWorld) addTasks(f *fixture, title string) string {
	GinkgoHelper()
	f.foreign["workItemId"] = w.create(w.b.admin, "/api/orgboard/tasks", map[string]any{"teamId": f.foreign["teamId"], "title": "Their task"})
	return w.create(w.a.admin, "/api/orgboard/tasks", map[string]any{"teamId": f.ids["teamId"], "title": title})
}

func taskOfA(w *authzWorld) *fixture {
	f := teamOfA(w)
	f.marker = "Task " + marker()
	task := w.addTasks(f, f.marker)
	f.read = reader(agentteam, "/api/orgboard/board?teamId="+f.ids["teamId"], w.a.admin.token)
	return f.with("id", task, "workItemId", task, "memberId", w.a.member.id)
}

func seatOfA(w *authzWorld) *fixture {
	f := teamOfA(w)
	f.marker = "Role " + marker()
	seat := w.create(w.a.admin, "/api/orgboard/seats", map[string]any{"teamId": f.ids["teamId"], "roleName": f.marker})
	f.foreign["id"] = w.create(w.b.admin, "/api/orgboard/seats", map[string]any{"teamId": f.foreign["teamId"], "roleName": "Their role"})
	f.read = reader(agentteam, "/api/orgboard/seats?teamId="+f.ids["teamId"], w.a.admin.token)
	return f.with("id", seat, "seatId", seat)
}

// agentOfA is an AI seat of A's team with its agent, using A's model connection and MCP server.
func agentOfA(w *authzWorld) *fixture {
	f := seatOfA(w)
	conn := w.create(w.a.admin, "/api/orgboard/model-connections", map[string]any{
		"organizationId": f.ids["organizationId"], "name": "Model", "baseUrl": "http://127.0.0.1:9/v1", "model": "stub", "apiKey": "sk-authz-" + marker(),
	})
	mcp := w.create(w.a.admin, "/api/orgboard/mcp-servers", map[string]any{
		"organizationId": f.ids["organizationId"], "name": "Tools", "url": "http://127.0.0.1:9/mcp",
	})
	f.marker = "Agent " + marker()
	w.must(agentteam, "POST", "/api/orgboard/seats/"+f.ids["id"]+"/agent", w.a.admin.token, map[string]any{"name": f.marker, "apiConfigId": conn})
	f.read = reader(agentteam, "/api/orgboard/seats/"+f.ids["id"]+"/agent", w.a.admin.token)
	return f.with("apiConfigId", conn, "fallbackApiConfigId", conn, "mcpServerIds", mcp)
}

// runOfA is an agent run on A's seat and task; the seat has no agent, so the run fails soon.
func runOfA(w *authzWorld) *fixture {
	f := seatOfA(w)
	task := w.create(w.a.admin, "/api/orgboard/tasks", map[string]any{"teamId": f.ids["teamId"], "title": "Task " + marker()})
	run := w.create(w.a.admin, "/api/assembler/runs", map[string]any{"seatId": f.ids["seatId"], "workItemId": task})
	f.marker = task
	f.read = reader(agentteam, "/api/assembler/runs/"+run, w.a.admin.token)
	return f.with("id", run, "workItemId", task)
}

// endedRunOfA is A's run, cancelled (or already ended by the worker) so that its event stream
// ends, with a call id that names no waiting call.
func endedRunOfA(w *authzWorld) *fixture {
	f := runOfA(w)
	code, body := agentteam.send("POST", "/api/assembler/runs/"+f.ids["id"]+"/cancel", nil, w.a.admin.token, nil)
	Expect(code).To(BeElementOf(200, 409), "cancel the fixture's run: %s", body)
	return f.with("callId", "call-"+marker())
}

// runPartsOfA is A's seat and a task on its team, for queueing a run.
func runPartsOfA(w *authzWorld) *fixture {
	f := seatOfA(w)
	task := w.addTasks(f, "Task "+marker())
	f.foreign["seatId"] = f.foreign["id"]
	f.read = reader(agentteam, "/api/assembler/runs?seatId="+f.ids["seatId"], w.a.admin.token)
	return f.with("workItemId", task)
}

func divisionOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	f.marker = "Division " + marker()
	div := w.create(w.a.admin, "/api/orgboard/divisions", map[string]any{"organizationId": f.ids["organizationId"], "name": f.marker})
	f.read = reader(agentteam, "/api/orgboard/divisions?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("divisionId", div)
}

func productOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	f.marker = "Product " + marker()
	prod := w.create(w.a.admin, "/api/orgboard/products", map[string]any{"organizationId": f.ids["organizationId"], "name": "Product", "identity": f.marker})
	f.read = reader(agentteam, "/api/orgboard/products/"+prod+"/identity", w.a.admin.token)
	return f.with("id", prod, "productId", prod)
}

func modelConnectionOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	f.marker = "Model " + marker()
	id := w.create(w.a.admin, "/api/orgboard/model-connections", map[string]any{
		"organizationId": f.ids["organizationId"], "name": f.marker, "baseUrl": "http://127.0.0.1:9/v1", "model": "stub", "apiKey": "sk-authz-" + marker(),
	})
	f.read = reader(agentteam, "/api/orgboard/model-connections?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("id", id)
}

func mcpServerOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	f.marker = "MCP " + marker()
	id := w.create(w.a.admin, "/api/orgboard/mcp-servers", map[string]any{
		"organizationId": f.ids["organizationId"], "name": f.marker, "url": "http://127.0.0.1:9/mcp",
		"headers": map[string]string{"X-Api-Token": "secret-" + marker()},
	})
	f.read = reader(agentteam, "/api/orgboard/mcp-servers?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("id", id)
}

func memoryEntryOfA(w *authzWorld) *fixture {
	f := teamOfA(w)
	f.marker = "Memory " + marker()
	id := w.create(w.a.admin, "/api/memory/entries", map[string]any{"teamId": f.ids["teamId"], "kind": "Note", "content": f.marker})
	f.read = reader(agentteam, "/api/memory/entries?teamId="+f.ids["teamId"], w.a.admin.token)
	return f.with("id", id)
}

// skillOfA is a Published skill A's organization authored, still private.
func skillOfA(w *authzWorld) *fixture {
	f := orgOfA(w)
	key := "authz-" + marker()
	f.marker = "Skill " + marker()
	id := w.create(w.a.admin, "/api/skills/authored", map[string]any{
		"organizationId": f.ids["organizationId"], "skillKey": key, "name": f.marker, "version": "1.0",
		"summary": "Checks things.", "body": "# " + key + "\n\nSteps.", "roles": []string{"qa"},
		"goldenTests": []map[string]string{{"input": "in", "expected": "out"}},
	})
	f.read = reader(agentteam, "/api/skills/"+key+"?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("key", key, "version", "1.0", "skillId", id)
}

// listedSkillOfA is A's skill listed on the marketplace.
func listedSkillOfA(w *authzWorld) *fixture {
	f := skillOfA(w)
	w.must(agentteam, "POST", "/api/skills/"+f.ids["key"]+"/publish", w.a.admin.token, map[string]any{"organizationId": f.ids["organizationId"], "version": "1.0"})
	return f
}

// profileDoc is a Published profile document.
func profileDoc(keyField, key, name string) string {
	return "---\n" + keyField + ": " + key + "\nname: " + name + "\nversion: \"1.0\"\nsummary: Works.\nroles: [qa]\n" +
		"goldenTests:\n  - input: in\n    expected: out\n---\n# Operating guide\n\nBe careful.\n"
}

// profileOfA is a Published agent or product profile A's organization uploaded, still private;
// base is the library's path.
func profileOfA(w *authzWorld, base string) *fixture {
	f := orgOfA(w)
	key := "authz-" + marker()
	f.marker = "Profile " + marker()
	id := w.create(w.a.admin, base, map[string]any{"organizationId": f.ids["organizationId"], "content": profileDoc("profileKey", key, f.marker)})
	f.read = reader(agentteam, base+"/"+key+"?organizationId="+f.ids["organizationId"], w.a.admin.token)
	return f.with("key", key, "version", "1.0", "profileId", id)
}

func agentProfileOfA(w *authzWorld) *fixture { return profileOfA(w, "/api/orgboard/agent-profiles") }

func listedAgentProfileOfA(w *authzWorld) *fixture {
	f := agentProfileOfA(w)
	w.must(agentteam, "POST", "/api/orgboard/agent-profiles/"+f.ids["key"]+"/publish", w.a.admin.token,
		map[string]any{"organizationId": f.ids["organizationId"], "version": "1.0"})
	return f
}

// productProfileOfA is A's product profile and product; the stranger has a profile of its own.
func productProfileOfA(w *authzWorld) *fixture {
	f := profileOfA(w, "/api/orgboard/product-profiles")
	f.ids["productId"] = w.create(w.a.admin, "/api/orgboard/products", map[string]any{"organizationId": f.ids["organizationId"], "name": "Product"})
	f.foreign["key"] = "authz-" + marker()
	w.create(w.b.admin, "/api/orgboard/product-profiles",
		map[string]any{"organizationId": f.foreign["organizationId"], "content": profileDoc("profileKey", f.foreign["key"], "Theirs")})
	return f
}

func listedProductProfileOfA(w *authzWorld) *fixture {
	f := productProfileOfA(w)
	w.must(agentteam, "POST", "/api/orgboard/product-profiles/"+f.ids["key"]+"/publish", w.a.admin.token,
		map[string]any{"organizationId": f.ids["organizationId"], "version": "1.0"})
	return f
}
