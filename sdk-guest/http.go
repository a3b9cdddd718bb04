package guest

import (
	"fmt"
	"strings"
)

// HTTPRequest is an outgoing HTTP request made by the host on the
// plugin's behalf (mcphost's http host function).
type HTTPRequest struct {
	Method string            // "" means GET
	URL    string            // absolute http or https URL
	Header map[string]string // one value per name
	Body   []byte
}

// HTTPResponse is the host's answer. Header names are lower case and
// repeated headers are joined with ",".
type HTTPResponse struct {
	Status int
	Header map[string]string
	Body   []byte
}

// HTTP sends req through the host, which enforces the plugin's
// allowed_hosts, may_request_hosts and response-size limit.
//
// Every failure is an error here and the call goes on: a destination the
// host refused (outside allowed_hosts, denied by a person, or a consent
// question still to be answered) is a [*HostError] with Refused set; a
// network failure or an oversized body is a *HostError too. Return it
// (or an error result); the plugin's instance and its state stay. It
// uses mcphost's http host function (abi.HostHTTP), so a plugin that
// calls HTTP needs mcphost: a plain Extism host lacks the import.
func HTTP(req *HTTPRequest) (*HTTPResponse, error) {
	if req == nil || req.URL == "" {
		return nil, fmt.Errorf("http: request has no URL")
	}
	if !strings.HasPrefix(req.URL, "http://") && !strings.HasPrefix(req.URL, "https://") {
		return nil, fmt.Errorf("http: %q is not an http or https URL", req.URL)
	}
	if callCancelled() {
		return nil, errCancelled("http")
	}
	resp, err := currentHost().HTTP(req)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	return resp, nil
}

// HeaderValue returns the value of header name (any case).
func (r *HTTPResponse) HeaderValue(name string) string {
	if v, ok := r.Header[strings.ToLower(name)]; ok {
		return v
	}
	for k, v := range r.Header {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
