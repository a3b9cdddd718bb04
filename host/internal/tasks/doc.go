// Package tasks runs the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663) for package host: a task-capable tools/call that outlives its
// request (Store.Run), tasks/get, tasks/update and tasks/cancel of the
// task's owner (Store.Get, Update, Cancel), and the task records every
// replica shares in the store, with the messages that reach the replica
// running a task (share.go).
//
// It owns the task's life: when a call becomes a task, its status,
// progress as statusMessage, input it waits for, eviction by TTL and by
// bytes, and failing a task whose replica is gone.
//
// It does not own: which calls run as tasks, reading tasks/* params or
// the client's capabilities, running the tool, input_required rounds,
// or sending anything to a client. The host gives each call a [Call] for
// those (host's taskcall.go). It imports no package of the host root, and
// knows nothing of sessions, transports, the plugin registry or Wasm: of
// the module, it uses host/internal/jsonrpc for errors and plugins/store.
package tasks
