package apikey

import "time"

// NormalizeAllowedIPs runs Create's checks on a key that differs from a valid one only in its
// allowed_ips, and answers the ranges as they would be stored.
func NormalizeAllowedIPs(ips []string) ([]string, error) {
	s := &Service{now: time.Now}
	in := New{Name: "key", Scopes: []string{"users:read"}, AllowedIPs: ips}
	err := s.validate(&in)
	return in.AllowedIPs, err
}

// IPAllowed is the gateway's address check of a restricted key.
var IPAllowed = ipAllowed
