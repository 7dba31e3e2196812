package app_test

import (
	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/api"
)

var _ = Describe("text no service can store", func() {
	It("refuses a NUL character or invalid UTF-8 in every body field and parameter of every route with a 4xx", func() {
		testkit.ExpectBadTextRefused(baseURL, api.OpenAPI, tokens.UserToken(uuid.NewString(), uuid.NewString(), true))
	})
})
