package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("authentication on the board and run endpoints", func() {
	id := uuid.NewString()
	DescribeTable("answers 401 without a token and 403 to a service token, with empty bodies",
		func(method, path string) {
			r := client.Do(method, path, "", map[string]any{})
			Expect(r.Status).To(Equal(http.StatusUnauthorized))
			Expect(r.Body).To(BeEmpty())
			r = client.Do(method, path, tokens.ServiceToken("render"), map[string]any{})
			Expect(r.Status).To(Equal(http.StatusForbidden))
			Expect(r.Body).To(BeEmpty())
		},
		Entry(nil, "POST", "/api/orgboard/divisions"),
		Entry(nil, "GET", "/api/orgboard/divisions?organizationId="+id),
		Entry(nil, "POST", "/api/orgboard/products"),
		Entry(nil, "GET", "/api/orgboard/products?organizationId="+id),
		Entry(nil, "GET", "/api/orgboard/products/"+id+"/identity"),
		Entry(nil, "PUT", "/api/orgboard/products/"+id+"/identity"),
		Entry(nil, "POST", "/api/orgboard/teams"),
		Entry(nil, "GET", "/api/orgboard/teams?organizationId="+id),
		Entry(nil, "POST", "/api/orgboard/tasks"),
		Entry(nil, "GET", "/api/orgboard/board?teamId="+id),
		Entry(nil, "PATCH", "/api/orgboard/tasks/"+id+"/move"),
		Entry(nil, "PATCH", "/api/orgboard/tasks/"+id+"/assign"),
		Entry(nil, "GET", "/api/orgboard/cartable"),
		Entry(nil, "POST", "/api/orgboard/seats"),
		Entry(nil, "GET", "/api/orgboard/seats?teamId="+id),
		Entry(nil, "POST", "/api/orgboard/seats/"+id+"/agent"),
		Entry(nil, "GET", "/api/orgboard/seats/"+id+"/agent"),
		Entry(nil, "GET", "/api/orgboard/performance?organizationId="+id),
		Entry(nil, "GET", "/api/orgboard/audit?organizationId="+id),
		Entry(nil, "POST", "/api/assembler/runs"),
		Entry(nil, "GET", "/api/assembler/runs?seatId="+id),
		Entry(nil, "GET", "/api/assembler/runs/"+id),
		Entry(nil, "POST", "/api/assembler/runs/"+id+"/cancel"),
	)
})
