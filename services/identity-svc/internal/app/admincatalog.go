package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/service"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/catalog"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
)

const catalogUsage = `usage: identity-svc admin plan|gift|quest create|retire -tenant SLUG [flags]

  plan create   -tenant SLUG -code C -name N -price-minor P -currency EUR [-scope User|Tenant]
                [-period Monthly|Quarterly|Yearly] [-seconds S] [-storage-gb G] [-parallel N] [-description D]
  plan retire   -tenant SLUG -code C
  gift create   -tenant SLUG -name N -prize-type Balance|DailyRenders|RenderSeconds -value V
                [-unit U] [-valid-for 720h] [-description D]
  gift retire   -tenant SLUG -id ID              (refused while an active quest awards it)
  quest create  -tenant SLUG -title T -type OneTime|Daily|Weekly|Onboarding|Milestone -trigger EVENT
                -target N (-prize-amount MINOR | -gift ID) [-challenge C]
  quest retire  -tenant SLUG -id ID`

// adminCatalog creates and retires a tenant's plans, gifts and quests (ADR 0147), writing the
// new offer's id or the retired one to enc.
func adminCatalog(ctx context.Context, db *gorm.DB, kind string, args []string, enc *json.Encoder) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "retire") {
		return errors.New(catalogUsage)
	}
	fs := flag.NewFlagSet("admin "+kind+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	slug := fs.String("tenant", "", "tenant slug")
	offers := catalog.NewService(store.NewCatalog(db), questTriggers(), service.Now, service.NewID)
	tenantID := func() (string, error) {
		t, err := store.NewTenants(db, nil, nil).BySlug(ctx, strings.ToLower(strings.TrimSpace(*slug)))
		if err != nil {
			return "", fmt.Errorf("tenant %q: %w", *slug, err)
		}
		return t.ID, nil
	}
	var run func(tenantID string) (map[string]any, error)
	switch kind + " " + args[0] {
	case "plan create":
		var p catalog.Plan
		fs.StringVar(&p.Code, "code", "", "plan code")
		fs.StringVar(&p.Name, "name", "", "plan name")
		fs.StringVar(&p.Description, "description", "", "description")
		fs.StringVar(&p.Scope, "scope", "User", "User or Tenant")
		fs.StringVar(&p.Currency, "currency", "", "ISO 4217 code")
		fs.StringVar(&p.BillingPeriod, "period", "Monthly", "Monthly, Quarterly or Yearly")
		fs.Int64Var(&p.PriceMinor, "price-minor", -1, "price in minor units")
		fs.IntVar(&p.SecondsCharge, "seconds", 0, "render seconds granted")
		fs.IntVar(&p.StorageGB, "storage-gb", 0, "storage granted")
		fs.IntVar(&p.ParallelRenders, "parallel", 1, "parallel renders")
		run = func(id string) (map[string]any, error) {
			p.TenantID = id
			planID, err := offers.CreatePlan(ctx, p)
			return map[string]any{"id": planID, "code": p.Code}, err
		}
	case "plan retire":
		code := fs.String("code", "", "plan code")
		run = func(id string) (map[string]any, error) {
			return map[string]any{"retired": *code}, offers.RetirePlan(ctx, id, *code)
		}
	case "gift create":
		var g catalog.Gift
		fs.StringVar(&g.Name, "name", "", "gift name")
		fs.StringVar(&g.Description, "description", "", "description")
		fs.StringVar(&g.PrizeType, "prize-type", "", "Balance, DailyRenders or RenderSeconds")
		fs.StringVar(&g.Unit, "unit", "", "unit shown with the value")
		fs.Int64Var(&g.Value, "value", 0, "value")
		fs.DurationVar(&g.ValidFor, "valid-for", 0, "how long an earned gift may be used (0: forever)")
		run = func(id string) (map[string]any, error) {
			g.TenantID = id
			giftID, err := offers.CreateGift(ctx, g)
			return map[string]any{"id": giftID}, err
		}
	case "quest create":
		var q catalog.Quest
		fs.StringVar(&q.Title, "title", "", "title")
		fs.StringVar(&q.Challenge, "challenge", "", "what to do")
		fs.StringVar(&q.QuestType, "type", "OneTime", "OneTime, Daily, Weekly, Onboarding or Milestone")
		fs.StringVar(&q.Trigger, "trigger", "", "webhook name of the counted event")
		fs.IntVar(&q.TargetCount, "target", 1, "events needed")
		fs.Int64Var(&q.PrizeAmount, "prize-amount", 0, "balance prize in minor units")
		fs.StringVar(&q.GiftID, "gift", "", "gift id (a Gift prize)")
		run = func(id string) (map[string]any, error) {
			q.TenantID, q.PrizeType = id, "Balance"
			if q.GiftID != "" {
				q.PrizeType = "Gift"
			}
			questID, err := offers.CreateQuest(ctx, q)
			return map[string]any{"id": questID}, err
		}
	default:
		offerID := fs.String("id", "", kind+" id")
		run = func(id string) (map[string]any, error) {
			retire := offers.RetireQuest
			if kind == "gift" {
				retire = offers.RetireGift
			}
			return map[string]any{"retired": *offerID}, retire(ctx, id, *offerID)
		}
	}
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w\n%s", err, catalogUsage)
	}
	id, err := tenantID()
	if err != nil {
		return err
	}
	out, err := run(id)
	if err != nil {
		return err
	}
	return enc.Encode(out)
}

// questTriggers are the webhook names of the events the quest-progress consumer counts.
func questTriggers() []string {
	c, _ := events.Durable(events.DurableQuestProgress)
	names := make([]string, 0, len(c.Subjects))
	for _, s := range c.Subjects {
		if name, ok := events.WebhookEventOf(s); ok {
			names = append(names, name)
		}
	}
	return names
}
