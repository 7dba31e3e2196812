package app_test

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("divisions and products", func() {
	It("creates divisions and products for the Owner and lists them oldest first", func() {
		c := newCrew()
		var d struct{ ID, OrganizationID, Name string }
		ok("POST", "/api/orgboard/divisions", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Consumer"}, &d)
		Expect(d.Name).To(Equal("Consumer"))
		Expect(d.OrganizationID).To(Equal(c.OrgID))

		var p struct {
			ID, Kind, Identity, Name string
			DivisionID               *string
		}
		ok("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{
			"organizationId": c.OrgID, "name": "Motion", "kind": "Service", "divisionId": d.ID, "identity": "# Motion\nA brief.",
		}, &p)
		Expect(p.Kind).To(Equal("Service"))
		Expect(*p.DivisionID).To(Equal(d.ID))
		Expect(p.Identity).To(Equal("# Motion\nA brief."))
		var second struct{ Kind string }
		ok("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Plain"}, &second)
		Expect(second.Kind).To(Equal("Product"))

		var products []struct{ Name string }
		ok("GET", "/api/orgboard/products?organizationId="+c.OrgID, c.Member.Token, nil, &products)
		Expect(products).To(HaveLen(2))
		Expect(products[0].Name).To(Equal("Motion"))
		var divisions []struct{ Name string }
		ok("GET", "/api/orgboard/divisions?organizationId="+c.OrgID, c.Member.Token, nil, &divisions)
		Expect(divisions).To(HaveLen(1))
		Expect(auditActions(c.OrgID)[:3]).To(Equal([]string{"product.created", "product.created", "division.created"}))
	})

	It("refuses a blank name, an unknown kind and another organization's division with 400", func() {
		c, other := newCrew(), newCrew()
		var foreign idOf
		ok("POST", "/api/orgboard/divisions", other.Owner.Token, map[string]any{"organizationId": other.OrgID, "name": "Theirs"}, &foreign)

		r := client.Do("POST", "/api/orgboard/divisions", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": " "})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Name is required."))
		r = client.Do("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Name is required."))
		r = client.Do("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "x", "kind": "Gadget"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("kind must be Product or Service."))
		for _, division := range []string{foreign.ID, uuid.NewString()} {
			r = client.Do("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "x", "divisionId": division})
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(string(r.Body)).To(Equal("divisionId does not name a division of this organization."))
		}
		Expect(count(`SELECT count(*) FROM products WHERE organization_id = ?`, c.OrgID)).To(BeZero())
	})

	It("reads the product identity with ViewBoard and replaces it owner-level", func() {
		c := newCrew()
		var p idOf
		ok("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Motion", "identity": "v1"}, &p)
		var ident struct{ ProductID, Identity string }
		ok("GET", "/api/orgboard/products/"+p.ID+"/identity", c.Member.Token, nil, &ident)
		Expect(ident.Identity).To(Equal("v1"))
		ok("PUT", "/api/orgboard/products/"+p.ID+"/identity", c.Owner.Token, map[string]any{"identity": "v2"}, &ident)
		Expect(ident.Identity).To(Equal("v2"))
		Expect(ident.ProductID).To(Equal(p.ID))
		Expect(auditActions(c.OrgID)[0]).To(Equal("product.identity_updated"))

		r := client.Do("GET", "/api/orgboard/products/"+uuid.NewString()+"/identity", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(string(r.Body)).To(Equal("Product not found."))
		r = client.Do("PUT", "/api/orgboard/products/"+p.ID+"/identity", c.Owner.Token, map[string]any{"identity": strings.Repeat("x", 200001)})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("GET", "/api/orgboard/products/not-a-uuid/identity", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
	})

	It("holds the capability matrix", func() {
		c := newCrew()
		var p idOf
		ok("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Motion"}, &p)
		expectMatrix(c, ownerOnly, func(t string) testkit.Response {
			return client.Do("POST", "/api/orgboard/divisions", t, map[string]any{"organizationId": c.OrgID, "name": "D"})
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response {
			return client.Do("GET", "/api/orgboard/divisions?organizationId="+c.OrgID, t, nil)
		})
		expectMatrix(c, ownerOnly, func(t string) testkit.Response {
			return client.Do("POST", "/api/orgboard/products", t, map[string]any{"organizationId": c.OrgID, "name": "P"})
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response {
			return client.Do("GET", "/api/orgboard/products?organizationId="+c.OrgID, t, nil)
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response {
			return client.Do("GET", "/api/orgboard/products/"+p.ID+"/identity", t, nil)
		})
		expectMatrix(c, ownerOnly, func(t string) testkit.Response {
			return client.Do("PUT", "/api/orgboard/products/"+p.ID+"/identity", t, map[string]any{"identity": "mine"})
		})
	})
})

var _ = Describe("teams", func() {
	It("creates teams for the Owner, optionally for a product, and lists them oldest first", func() {
		c := newCrew()
		var p idOf
		ok("POST", "/api/orgboard/products", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Motion"}, &p)
		var first struct {
			ID, OrganizationID, Name string
			ProductID                *string
		}
		ok("POST", "/api/orgboard/teams", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Alpha", "productId": p.ID}, &first)
		Expect(first.Name).To(Equal("Alpha"))
		Expect(*first.ProductID).To(Equal(p.ID))
		ok("POST", "/api/orgboard/teams", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "Beta"}, nil)

		var teams []struct{ Name string }
		ok("GET", "/api/orgboard/teams?organizationId="+c.OrgID, c.Member.Token, nil, &teams)
		Expect(teams).To(Equal([]struct{ Name string }{{"Alpha"}, {"Beta"}}))
		ok("GET", "/api/orgboard/teams?organizationId="+c.OrgID+"&page=2&pageSize=1", c.Member.Token, nil, &teams)
		Expect(teams).To(Equal([]struct{ Name string }{{"Beta"}}))
		Expect(auditActions(c.OrgID)[:2]).To(Equal([]string{"team.created", "team.created"}))
	})

	It("answers the spec's 400s: blank name, unknown organization (even for a stranger), foreign product", func() {
		c, other := newCrew(), newCrew()
		r := client.Do("POST", "/api/orgboard/teams", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": ""})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Name is required."))
		r = client.Do("POST", "/api/orgboard/teams", newUser().Token, map[string]any{"organizationId": uuid.NewString(), "name": "Ghost"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("Organization does not exist; create it first."))
		var foreign idOf
		ok("POST", "/api/orgboard/products", other.Owner.Token, map[string]any{"organizationId": other.OrgID, "name": "Theirs"}, &foreign)
		r = client.Do("POST", "/api/orgboard/teams", c.Owner.Token, map[string]any{"organizationId": c.OrgID, "name": "X", "productId": foreign.ID})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(Equal("productId does not name a product of this organization."))
		r = client.Do("GET", "/api/orgboard/teams?organizationId="+c.OrgID+"&pageSize=101", c.Owner.Token, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
	})

	It("holds the capability matrix", func() {
		c := newCrew()
		expectMatrix(c, ownerOnly, func(t string) testkit.Response {
			return client.Do("POST", "/api/orgboard/teams", t, map[string]any{"organizationId": c.OrgID, "name": "T"})
		})
		expectMatrix(c, anyMember, func(t string) testkit.Response {
			return client.Do("GET", "/api/orgboard/teams?organizationId="+c.OrgID, t, nil)
		})
	})
})
