;; A component built for a host with a vendor's interface
;; (acme:telemetry/log), which mcphost does not provide: it loads, but `mcphost validate` must fail and name the
;; import (its tool never calls it, so only validate can tell early).
(component
  (import "acme:telemetry/log@0.1.0" (instance $logging
    (type $level (enum "trace" "debug" "info" "warn" "error" "critical"))
    (export "level" (type $l (eq $level)))
    (export "log" (func (param "level" $l) (param "context" string) (param "message" string)))))
  (core module $libc (memory (export "mem") 1))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (core func $log (canon lower (func $logging "log") (memory $mem) string-encoding=utf8))
  (core module $m
    (import "x" "log" (func $log (param i32 i32 i32 i32 i32)))
    (func (export "answer") (result i32) (i32.const 42)))
  (core instance $i (instantiate $m (with "x" (instance (export "log" (func $log))))))
  (func (export "answer") (result u32) (canon lift (core func $i "answer")))
)
