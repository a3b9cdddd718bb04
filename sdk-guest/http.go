package guest

import (
	"fmt"
	"strings"
)

// HTTPRequest is an outgoing HTTP request made by the host on the
// plugin's behalf (Extism http_request).
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
// allowed_hosts and response-size limit.
//
// Under Extism a refused request (a host outside allowed_hosts, a network
// error) aborts the whole call rather than returning an error here: the
// host sees a failed host function and reports the call as failed (mcphost
// turns it into an isError tool result). Errors returned here are the
// SDK's own (a bad request, kernel memory exhausted).
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
