package events

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// CloudEvents extension attributes naming whom an event concerns. Extension
// names are lower-case letters and digits; in binary mode they travel as the
// headers "ce-tenantid" and "ce-organizationid".
const (
	AttributeTenantID       = "tenantid"
	AttributeOrganizationID = "organizationid"
)

// Concern says which tenant or organization the events of a subject concern.
// The id is copied from the payload field of that name into a CloudEvents
// extension attribute, so routers and consumers can tell whose event it is
// without decoding the payload.
type Concern string

// Concerns of catalogue entries.
const (
	// ConcernTenant: the payload's tenant_id, always set, as ce-tenantid.
	ConcernTenant Concern = "tenant"
	// ConcernOrganization: the payload's organization_id, always set, as
	// ce-organizationid.
	ConcernOrganization Concern = "organization"
	// ConcernRequesterTenant: the payload's tenant_id, the tenant of the user
	// whose request started the work, as ce-tenantid; empty, and the header
	// absent, when a service made the request.
	ConcernRequesterTenant Concern = "requester_tenant"
)

// Attribute is the CloudEvents extension attribute that carries the id.
func (c Concern) Attribute() string {
	if c == ConcernOrganization {
		return AttributeOrganizationID
	}
	return AttributeTenantID
}

// Field is the payload field the id is copied from.
func (c Concern) Field() protoreflect.Name {
	if c == ConcernOrganization {
		return "organization_id"
	}
	return "tenant_id"
}

// Optional reports whether an event may concern none, leaving the attribute out.
func (c Concern) Optional() bool { return c == ConcernRequesterTenant }

// Attributes are the CloudEvents attributes the catalogue gives an event
// besides its id, type, source and time. Empty values are left out of the
// message.
type Attributes struct {
	// DataSchema is the URI of the payload's schema (ce-dataschema).
	DataSchema string
	// TenantID is the tenant the event concerns (ce-tenantid).
	TenantID string
	// OrganizationID is the organization the event concerns (ce-organizationid).
	OrganizationID string
}

// AttributesOf returns the attributes of an event of type subject carrying
// msg: the subject's data schema and the tenant or organization the payload
// names. It returns an error when subject is not in the catalogue, msg is not
// the subject's message, or a tenant or organization the subject always
// concerns is empty in msg.
func AttributesOf(subject string, msg proto.Message) (Attributes, error) {
	e, ok := Lookup(subject)
	if !ok {
		return Attributes{}, fmt.Errorf("events: %q is not in the catalogue", subject)
	}
	m := msg.ProtoReflect()
	if got := string(m.Descriptor().FullName()); got != e.MessageName() {
		return Attributes{}, fmt.Errorf("events: %s carries %s, not %s", subject, e.MessageName(), got)
	}
	a := Attributes{DataSchema: e.DataSchema()}
	fd := m.Descriptor().Fields().ByName(e.Concern.Field())
	if fd == nil || fd.Kind() != protoreflect.StringKind {
		return Attributes{}, fmt.Errorf("events: %s has no string field %s", e.MessageName(), e.Concern.Field())
	}
	id := m.Get(fd).String()
	if id == "" && !e.Concern.Optional() {
		return Attributes{}, fmt.Errorf("events: %s event without %s", subject, e.Concern.Field())
	}
	if e.Concern.Attribute() == AttributeOrganizationID {
		a.OrganizationID = id
	} else {
		a.TenantID = id
	}
	return a, nil
}
