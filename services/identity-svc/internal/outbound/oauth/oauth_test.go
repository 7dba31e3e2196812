package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/oauth"
)

var _ = Describe("the OAuth code exchange", func() {
	var (
		srv      *httptest.Server
		received map[string]string
		userinfo string
	)
	BeforeEach(func() {
		received = map[string]string{}
		userinfo = `{"sub":"s-1","email":"ada@example.test","email_verified":true,"name":"Ada"}`
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/token":
				id, secret, _ := r.BasicAuth()
				received["client"] = id + ":" + secret
				received["code"], received["redirect_uri"] = r.FormValue("code"), r.FormValue("redirect_uri")
				if r.FormValue("code") != "good" {
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
					return
				}
				_, _ = w.Write([]byte(`{"access_token":"at-1","token_type":"Bearer"}`))
			case "/userinfo":
				received["bearer"] = r.Header.Get("Authorization")
				_, _ = w.Write([]byte(userinfo))
			}
		}))
		DeferCleanup(srv.Close)
	})

	provider := func() *oauth.Provider {
		return oauth.New(oauth.Config{Name: "idp", ClientID: "cid", ClientSecret: "csecret", TokenURL: srv.URL + "/token",
			UserInfoURL: srv.URL + "/userinfo", RedirectURI: "https://app.test/cb"}, 5*time.Second)
	}

	It("exchanges the code with the client's credentials and reads the account", func() {
		id, err := provider().Exchange(context.Background(), "good", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(id.Subject).To(Equal("s-1"))
		Expect(id.Email).To(Equal("ada@example.test"))
		Expect(id.EmailVerified).To(BeTrue())
		Expect(received).To(HaveKeyWithValue("client", "cid:csecret"))
		Expect(received).To(HaveKeyWithValue("redirect_uri", "https://app.test/cb"))
		Expect(received).To(HaveKeyWithValue("bearer", "Bearer at-1"))
	})

	It("sends the caller's redirect URI when given", func() {
		_, err := provider().Exchange(context.Background(), "good", "https://other.test/cb")
		Expect(err).NotTo(HaveOccurred())
		Expect(received).To(HaveKeyWithValue("redirect_uri", "https://other.test/cb"))
	})

	It("reports a refused code as Unauthenticated", func() {
		_, err := provider().Exchange(context.Background(), "bad", "")
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
	})

	It("reports a userinfo answer without subject and an unreachable provider as Unavailable", func() {
		userinfo = `{"email":"x@example.test"}`
		_, err := provider().Exchange(context.Background(), "good", "")
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		down := oauth.New(oauth.Config{Name: "down", TokenURL: "http://127.0.0.1:1/token", UserInfoURL: "http://127.0.0.1:1/u"}, time.Second)
		_, err = down.Exchange(context.Background(), "good", "")
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
	})
})
