package limits

import (
	"strings"
	"testing"
)

func TestParseHostRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule    string
		host    string // want, when valid
		port    uint16
		ip      bool
		wantErr string // "" when valid
	}{
		{rule: "api.example.com", host: "api.example.com"},
		{rule: "API.Example.com", host: "api.example.com"},
		{rule: "api.example.com:8443", host: "api.example.com", port: 8443},
		{rule: "*", host: "*"},
		{rule: "*:443", host: "*", port: 443},
		{rule: "*.example.org", host: "*.example.org"},
		{rule: "localhost:8080", host: "localhost", port: 8080},
		{rule: "127.0.0.1", host: "127.0.0.1", ip: true},
		{rule: "10.1.2.3:80", host: "10.1.2.3", port: 80, ip: true},
		{rule: "::1", host: "::1", ip: true},
		{rule: "[::1]", host: "::1", ip: true},
		{rule: "[fd00::1]:8080", host: "fd00::1", port: 8080, ip: true},
		{rule: "under_score.example", host: "under_score.example"},

		{rule: "", wantErr: "empty host"},
		{rule: "https://x.com", wantErr: "not a URL"},
		{rule: "x.com/api", wantErr: "not a path"},
		{rule: "x.com?q", wantErr: "not a path"},
		{rule: "user@x.com", wantErr: "credentials"},
		{rule: "x .com", wantErr: "spaces"},
		{rule: "x.com:", wantErr: "empty port"},
		{rule: ":443", wantErr: "empty host before the port"},
		{rule: "x.com:0", wantErr: "want a number from 1 to 65535"},
		{rule: "x.com:65536", wantErr: "want a number from 1 to 65535"},
		{rule: "x.com:https", wantErr: "want a number from 1 to 65535"},
		{rule: "x.com:+80", wantErr: "want a number from 1 to 65535"},
		{rule: "x.com:80:81", wantErr: "more than one ':'"},
		{rule: "[::1", wantErr: "without ']'"},
		{rule: "[::1]8080", wantErr: "after ']'"},
		{rule: "[::1]:", wantErr: "empty port"},
		{rule: "[x.com]:80", wantErr: "not an IPv6 address"},
		{rule: "[127.0.0.1]", wantErr: "not an IPv6 address"},
		{rule: "fe80::1%eth0", wantErr: "names an IPv6 zone"},
		{rule: "::%*", wantErr: "names an IPv6 zone"},
		{rule: "a.*.com", wantErr: `'*' may only appear alone or as a leading "*."`},
		{rule: "**.com", wantErr: `'*' may only appear`},
		{rule: "[a-", wantErr: "without ']'"},
		{rule: "{a,b}.com", wantErr: "cannot appear in a host name"},
	}
	for _, tc := range tests {
		t.Run(tc.rule, func(t *testing.T) {
			r, err := ParseHostRule(tc.rule)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %+v, %v; want an error containing %q", r, err, tc.wantErr)
				}
				if err := CheckAllowedHost(tc.rule); err == nil {
					t.Errorf("CheckAllowedHost: got nil; want the same error")
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v; want the rule accepted", err)
			}
			if r.Host != tc.host || r.Port != tc.port || r.IP.IsValid() != tc.ip {
				t.Errorf("got host %q port %d ip %v; want %q %d %v", r.Host, r.Port, r.IP.IsValid(), tc.host, tc.port, tc.ip)
			}
		})
	}
}
