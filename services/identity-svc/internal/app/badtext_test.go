package app_test

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/api"
)

var _ = Describe("text no service can store", func() {
	It("refuses a NUL character or invalid UTF-8 in every body field and parameter of every route with a 4xx", func() {
		_, slug := newTenant("badtext")
		testkit.ExpectBadTextRefused(serviceBase, api.OpenAPI, newMember(slug, "platform-admin").Token)
	})
})
