;; Imports every function of murmur:hook/lifecycle@0.5.0, as a
;; componentize-js guest importing murmur:runtime/inference does (types
;; simplified: the host's definitions are untyped), and calls on-compaction
;; from its root export probe(), which the host must answer with a trap.
(component
  (import "murmur:hook/lifecycle@0.5.0" (instance $lc
    (export "on-stage" (func (result (result string (error string)))))
    (export "on-session-start" (func (result (result string (error string)))))
    (export "on-task-start" (func (result (result string (error string)))))
    (export "on-inference" (func (result (result string (error string)))))
    (export "on-tool-call" (func (result (result string (error string)))))
    (export "on-shell" (func (result (result string (error string)))))
    (export "on-compaction" (func (result (result string (error string)))))
    (export "on-task-end" (func (result (result string (error string)))))
    (export "on-session-end" (func (result (result string (error string)))))
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
  (core func $compact (canon lower (func $lc "on-compaction") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "lc" "compact" (func $compact (param i32)))
    (func (export "probe") (result i32)
      (call $compact (i32.const 4096))
      (i32.const 0)))
  (core instance $ci (export "compact" (func $compact)))
  (core instance $i (instantiate $m (with "lc" (instance $ci))))
  (func (export "probe") (result u32)
    (canon lift (core func $i "probe")))
)
