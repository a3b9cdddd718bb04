;; A component that calls its own export back through the host: f calls
;; the function in table slot 0, which the fixup module fills with f
;; lowered again. Without a bound this recursion would run the host out of
;; Go stack (a crash, not an error); the host must trap it.
(component
  (core module $tbl (table (export "t") 1 funcref))
  (core instance $tbl (instantiate $tbl))
  (core module $m
    (import "x" "t" (table 1 funcref))
    (type $ft (func (result i32)))
    (func (export "f") (result i32) (call_indirect (type $ft) (i32.const 0))))
  (core instance $i (instantiate $m (with "x" (instance $tbl))))
  (func $f (result u32) (canon lift (core func $i "f")))
  (core func $g (canon lower (func $f)))
  (core module $fix
    (import "x" "t" (table 1 funcref))
    (import "x" "g" (func $g (result i32)))
    (elem (i32.const 0) func $g))
  (core instance (instantiate $fix (with "x" (instance (export "t" (table $tbl "t")) (export "g" (func $g))))))
  (export "f" (func $f))
)
