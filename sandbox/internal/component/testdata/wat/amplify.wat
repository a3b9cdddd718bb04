;; A component whose result is a list of strings that all point at one
;; region of its memory: lifting it would copy that region once per
;; element (8 GB from 1 MiB of memory), so the host must stop at the
;; plugin's output limit. amplify(n, size) returns n strings of size bytes
;; (at most 16000 and 1 MiB).
(component
  (core module $m
    (memory (export "memory") 18)
    (func (export "amplify") (param $n i32) (param $size i32) (result i32)
      (local $i i32)
      (if (i32.gt_u (local.get $n) (i32.const 16000)) (then (local.set $n (i32.const 16000))))
      (if (i32.gt_u (local.get $size) (i32.const 0x100000)) (then (local.set $size (i32.const 0x100000))))
      (memory.fill (i32.const 0) (i32.const 97) (local.get $size))
      (block $done
        (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (i32.store (i32.add (i32.const 0x100010) (i32.shl (local.get $i) (i32.const 3))) (i32.const 0))
          (i32.store (i32.add (i32.const 0x100014) (i32.shl (local.get $i) (i32.const 3))) (local.get $size))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
      (i32.store (i32.const 0x100000) (i32.const 0x100010))
      (i32.store (i32.const 0x100004) (local.get $n))
      (i32.const 0x100000)))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (func (export "amplify") (param "n" u32) (param "size" u32) (result (list string))
    (canon lift (core func $i "amplify") (memory $mem) string-encoding=utf8))
)
