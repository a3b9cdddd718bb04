;; A component that declares WASI imports with types other than WASI's:
;; exit taking a u32 (WASI: result), get-environment returning a u32
;; (WASI: a list of pairs). The host must trap each call with words, not
;; with Go's "interface conversion" and its stack.
(component
  (import "wasi:cli/exit@0.2.0" (instance $exit
    (export "exit" (func (param "status" u32)))))
  (import "wasi:cli/environment@0.2.0" (instance $env
    (export "get-environment" (func (result u32)))))
  (core func $exit (canon lower (func $exit "exit")))
  (core func $env (canon lower (func $env "get-environment")))
  (core module $m
    (import "x" "exit" (func $exit (param i32)))
    (import "x" "env" (func $env (result i32)))
    (func (export "exit") (call $exit (i32.const 3)))
    (func (export "env") (result i32) (call $env)))
  (core instance $i (instantiate $m
    (with "x" (instance (export "exit" (func $exit)) (export "env" (func $env))))))
  (func (export "exit-u32") (canon lift (core func $i "exit")))
  (func (export "env-u32") (result u32) (canon lift (core func $i "env")))
)
