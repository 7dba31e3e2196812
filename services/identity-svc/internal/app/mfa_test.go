package app_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// totpCode computes a code with pquerna/otp, an implementation independent of the service's.
func totpCode(secret string, at time.Time) string {
	GinkgoHelper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	Expect(err).NotTo(HaveOccurred())
	return code
}

var _ = Describe("MFA with TOTP and recovery codes", Ordered, func() {
	var (
		c        authClient
		acc      authAccount
		tok      authTokens
		secret   string
		recovery []string
		factorID string
		verified time.Time
	)
	BeforeAll(func() {
		c = newAuthClient()
		acc = authRegister(c)
		tok = authLogin(c, acc, "Laptop")
	})

	loginPending := func() string {
		GinkgoHelper()
		status, body := c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": acc.TenantSlug, "email": acc.Email, "password": authPassword, "device_name": "Phone"})
		Expect(status).To(Equal(http.StatusForbidden), "%v", body)
		Expect(body).To(HaveKeyWithValue("code", "mfa_required"))
		Expect(body["factors"]).To(ConsistOf(And(HaveKeyWithValue("id", factorID), HaveKeyWithValue("factor_type", "TOTP"))))
		return body["mfa_token"].(string)
	}
	challenge := func(mfaToken, code string) (int, map[string]any) {
		GinkgoHelper()
		return c.do("POST", "/v1/auth/mfa/challenge", "", map[string]any{"mfa_token": mfaToken, "code": code})
	}

	It("sets up a TOTP factor with a secret, an otpauth URL and ten recovery codes", func() {
		status, body := c.do("POST", "/v1/auth/mfa/setup", tok.Access, map[string]any{"factor_type": "TOTP", "label": "Authenticator"})
		Expect(status).To(Equal(http.StatusOK))
		factorID, secret = body["factor_id"].(string), body["secret"].(string)
		Expect(body["qr_code_url"]).To(HavePrefix("otpauth://totp/"))
		key, err := otp.NewKeyFromURL(body["qr_code_url"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(key.Secret()).To(Equal(secret))
		for _, r := range body["recovery_codes"].([]any) {
			recovery = append(recovery, r.(string))
		}
		Expect(recovery).To(HaveLen(10))

		var sealed []byte
		Expect(testDB().Raw("SELECT secret_sealed FROM mfa_factors WHERE id = ?", factorID).Row().Scan(&sealed)).To(Succeed())
		Expect(string(sealed)).NotTo(ContainSubstring(secret), "the secret is encrypted at rest")
		var hashes []string
		Expect(testDB().Raw("SELECT code_hash FROM mfa_recovery_codes WHERE factor_id = ?", factorID).Scan(&hashes).Error).To(Succeed())
		Expect(hashes).To(HaveLen(10))
		Expect(hashes).NotTo(ContainElement(recovery[0]), "recovery codes are stored hashed")
	})

	It("does not ask for the factor before it is verified", func() {
		authLogin(c, acc, "Laptop")
	})

	It("refuses a wrong first code and verifies with the current code", func() {
		verified = time.Now()
		good := totpCode(secret, verified)
		wrong := "000000"
		if good == wrong {
			wrong = "111111"
		}
		status, body := c.do("POST", "/v1/auth/mfa/verify", tok.Access, map[string]any{"factor_id": factorID, "code": wrong})
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(HaveKeyWithValue("code", "wrong_code"))
		status, body = c.do("POST", "/v1/auth/mfa/verify", tok.Access, map[string]any{"factor_id": factorID, "code": good})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"id": factorID, "factor_type": "TOTP", "label": "Authenticator", "verified": true}))
	})

	It("answers 403 with an mfa_token, then tokens for the next time step's code, once", func() {
		mfaToken := loginPending()
		next := totpCode(secret, verified.Add(30*time.Second))
		status, body := challenge(mfaToken, next)
		Expect(status).To(Equal(http.StatusOK), "%v", body)
		Expect(body["user"]).To(HaveKeyWithValue("id", acc.ID))

		status, _ = c.do("GET", "/v1/auth/sessions", body["access_token"].(string), nil)
		Expect(status).To(Equal(http.StatusOK))
		status, body = challenge(mfaToken, next)
		Expect(status).To(Equal(http.StatusUnauthorized), "the mfa_token is single use")
		Expect(body).To(HaveKeyWithValue("code", "invalid_mfa_token"))

		second := loginPending()
		status, body = challenge(second, next)
		Expect(status).To(Equal(http.StatusUnauthorized), "a time step is refused the second time")
		Expect(body).To(HaveKeyWithValue("code", "invalid_mfa_code"))

		status, _ = challenge(second, strings.ToUpper(recovery[0]))
		Expect(status).To(Equal(http.StatusOK), "a recovery code completes the same login")
	})

	It("accepts each recovery code once and burns the mfa_token after five wrong codes", func() {
		mfaToken := loginPending()
		status, _ := challenge(mfaToken, recovery[0])
		Expect(status).To(Equal(http.StatusUnauthorized), "a used recovery code is refused")
		for range 4 {
			status, _ = challenge(mfaToken, "zzzzz-zzzzz")
			Expect(status).To(Equal(http.StatusUnauthorized))
		}
		status, body := challenge(mfaToken, recovery[1])
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(HaveKeyWithValue("code", "invalid_mfa_token"))
	})

	It("refuses an unknown factor, another user's factor and a bad factor type", func() {
		status, _ := c.do("POST", "/v1/auth/mfa/verify", tok.Access, map[string]any{"factor_id": uuid.NewString(), "code": "123456"})
		Expect(status).To(Equal(http.StatusNotFound))
		// The spec makes its own factor rather than reading the container's, so that it does not
		// depend on the specs before it having run (a focused or filtered run skips them).
		status, body := c.do("POST", "/v1/auth/mfa/setup", tok.Access, map[string]any{"factor_type": "TOTP", "label": "Spare"})
		Expect(status).To(Equal(http.StatusOK))
		spare := body["factor_id"].(string)
		other := authRegister(c)
		otherTok := authLogin(c, other, "Other")
		status, _ = c.do("POST", "/v1/auth/mfa/verify", otherTok.Access, map[string]any{"factor_id": spare, "code": "123456"})
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = c.do("POST", "/v1/auth/mfa/setup", otherTok.Access, map[string]any{"factor_type": "EMAIL"})
		Expect(status).To(Equal(http.StatusBadRequest))
		status, body = c.do("POST", "/v1/auth/mfa/setup", otherTok.Access, map[string]any{"factor_type": "SMS"})
		Expect(status).To(Equal(http.StatusBadRequest), "an SMS factor needs a phone number")
		Expect(body).To(HaveKeyWithValue("code", "phone_required"))
		status, _ = c.do("POST", "/v1/auth/mfa/setup", "", map[string]any{"factor_type": "TOTP"})
		Expect(status).To(Equal(http.StatusUnauthorized))
		status, _ = challenge("", "")
		Expect(status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("MFA with SMS codes", func() {
	It("texts a code at setup and at each login, and each code works once", func() {
		c := newAuthClient()
		slug := authTenant()
		phone := uniquePhone()
		status, _ := c.do("POST", "/v1/auth/register", "", map[string]any{"tenant_slug": slug, "phone_number": phone, "password": authPassword})
		Expect(status).To(Equal(http.StatusCreated))
		status, body := c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "phone_number": phone, "password": authPassword})
		Expect(status).To(Equal(http.StatusOK))
		access := body["access_token"].(string)

		status, body = c.do("POST", "/v1/auth/mfa/setup", access, map[string]any{"factor_type": "SMS"})
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("secret", ""))
		factorID := body["factor_id"].(string)
		setup := lastMessage(phone, "mfa-sms-setup")
		status, _ = c.do("POST", "/v1/auth/mfa/verify", access, map[string]any{"factor_id": factorID, "code": setup.Code})
		Expect(status).To(Equal(http.StatusOK))

		status, body = c.do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "phone_number": phone, "password": authPassword})
		Expect(status).To(Equal(http.StatusForbidden))
		mfaToken := body["mfa_token"].(string)
		sms := lastMessage(phone, "mfa-sms")
		Expect(sms.Code).NotTo(Equal(setup.Code))
		status, _ = c.do("POST", "/v1/auth/mfa/challenge", "", map[string]any{"mfa_token": mfaToken, "code": setup.Code})
		Expect(status).To(Equal(http.StatusUnauthorized), "the setup code is spent")
		status, body = c.do("POST", "/v1/auth/mfa/challenge", "", map[string]any{"mfa_token": mfaToken, "code": sms.Code})
		Expect(status).To(Equal(http.StatusOK), "%v", body)
	})
})
