package editor_test

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

func invalidFields(err error) []string {
	GinkgoHelper()
	e, ok := apperr.As(err)
	Expect(ok).To(BeTrue(), "want an apperr, got %v", err)
	Expect(e.Kind).To(Equal(apperr.Invalid))
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

var _ = Describe("editor input checks", func() {
	// Input is refused before the store is reached, so no store is needed.
	svc := editor.NewService(nil, time.Now, uuid.NewString)
	ctx := context.Background()
	str := func(s string) *string { return &s }

	It("refuse scene keys that are not layer names and overlong titles", func() {
		_, err := svc.CreateScene(ctx, "p", editor.SceneFields{Key: str("with space"), Title: str(strings.Repeat("x", 201))})
		Expect(invalidFields(err)).To(ConsistOf("key", "title"))
	})

	It("refuse unknown content types and malformed colors", func() {
		_, err := svc.CreateContent(ctx, "s", editor.ContentFields{Key: str("t"), ContentType: str("hologram")})
		Expect(invalidFields(err)).To(ConsistOf("content_type"))
		_, err = svc.CreateColor(ctx, "s", editor.ColorFields{Key: str("c"), DefaultColor: str("#12345")})
		Expect(invalidFields(err)).To(ConsistOf("default_color"))
		_, err = svc.CreateSharedColor(ctx, editor.SharedColor{Key: "c", Color: "blue"})
		Expect(invalidFields(err)).To(ConsistOf("color"))
	})

	It("refuse a reorder that repeats a scene", func() {
		id := uuid.NewString()
		Expect(invalidFields(svc.ReorderScenes(ctx, id, []string{id, id}))).To(ConsistOf("ordered_ids"))
	})

	It("refuse preset story values that are not keyed by element or not colors", func() {
		_, err := svc.CreatePresetStory(ctx, editor.PresetStoryFull{
			PresetStory: editor.PresetStory{Name: "S"},
			Scenes: []editor.PresetStoryScene{
				{SceneID: uuid.NewString(), ContentValues: map[string]string{"bad key": "x"}},
				{SceneID: uuid.NewString(), ColorValues: map[string]string{"bg": "red"}},
			},
		})
		Expect(invalidFields(err)).To(ConsistOf("scenes[0].content_values", "scenes[1].color_values"))
	})
})
