// Package httpapi holds the shared helpers of the test workspace's HTTP handlers.
package httpapi

// Header is the header every answer carries.
const Header = "X-Shop"
