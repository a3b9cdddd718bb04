//go:build !wasip1

package guest

// platformHost is the host outside Wasm: none, until a test installs one
// with SetHostForTesting.
func platformHost() HostFuncs { return noHost{} }

type noHost struct{}

func (noHost) Call(string, []byte) ([]byte, error)      { return nil, ErrNoHost }
func (noHost) Config(string) (string, bool)             { return "", false }
func (noHost) HTTP(*HTTPRequest) (*HTTPResponse, error) { return nil, ErrNoHost }
func (noHost) Log(Level, string)                        {}
