package email_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/email"
)

var _ = Describe("the email rule", func() {
	DescribeTable("accepts a bare address and gives its stored form",
		func(raw, stored string) {
			got, ok := email.Normalize(raw)
			Expect(ok).To(BeTrue())
			Expect(got).To(Equal(stored))
			Expect(email.Valid(raw)).To(BeTrue())
		},
		Entry("a plain address", "ada@acme.test", "ada@acme.test"),
		Entry("upper case, lower-cased as login always did", "Ada.Lovelace@ACME.test", "ada.lovelace@acme.test"),
		Entry("surrounding spaces", "  ada@acme.test\t", "ada@acme.test"),
		Entry("a plus tag", "ada+news@acme.test", "ada+news@acme.test"),
		Entry("a host without a dot", "root@localhost", "root@localhost"),
		Entry("a 64-character local part", strings.Repeat("a", 64)+"@acme.test", strings.Repeat("a", 64)+"@acme.test"),
		Entry("254 characters", strings.Repeat("a", 64)+"@"+strings.Repeat("b", 184)+".test", strings.Repeat("a", 64)+"@"+strings.Repeat("b", 184)+".test"),
	)

	DescribeTable("refuses anything but a bare address",
		func(raw string) {
			_, ok := email.Normalize(raw)
			Expect(ok).To(BeFalse())
			Expect(email.Valid(raw)).To(BeFalse())
		},
		Entry("empty", ""),
		Entry("spaces only", "   "),
		Entry("a display name", "bob <bob@x.com>"),
		Entry("a quoted display name", `"Bob" <bob@x.com>`),
		Entry("angle brackets only", "<bob@x.com>"),
		Entry("a comment", "bob@x.com (Bob)"),
		Entry("two addresses", "a@x.com, b@x.com"),
		Entry("no at sign", "bob.x.com"),
		Entry("no local part", "@x.com"),
		Entry("no domain", "bob@"),
		Entry("a space inside", "bo b@x.com"),
		Entry("a quoted local part", `"bo b"@x.com`),
		Entry("a 65-character local part", strings.Repeat("a", 65)+"@acme.test"),
		Entry("255 characters", strings.Repeat("a", 64)+"@"+strings.Repeat("b", 185)+".test"),
	)
})
