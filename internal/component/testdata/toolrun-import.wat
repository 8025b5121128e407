;; Imports murmur:tool/run@0.1.0 with its run, as a componentize-js script
;; capsule importing murmur:tool-registry/invoke does (types simplified:
;; the host's definition is untyped), and calls run from its root export
;; probe(), which the host must answer with a trap.
(component
  (import "murmur:tool/run@0.1.0" (instance $tr
    (export "run" (func (result (result string (error string)))))
  ))
  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 8192))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      global.get $bump
      i32.const 7 i32.add i32.const -8 i32.and
      local.tee $p
      local.get 3 i32.add
      global.set $bump
      local.get $p))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (core func $run (canon lower (func $tr "run") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "tr" "run" (func $run (param i32)))
    (func (export "probe") (result i32)
      (call $run (i32.const 4096))
      (i32.const 0)))
  (core instance $ci (export "run" (func $run)))
  (core instance $i (instantiate $m (with "tr" (instance $ci))))
  (func (export "probe") (result u32)
    (canon lift (core func $i "probe")))
)
