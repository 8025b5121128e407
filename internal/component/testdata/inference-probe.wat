;; Calls murmur:runtime/inference@0.2.0 run-inference with no messages and
;; returns what came back: the err text, or "ok:" when it succeeded. Its
;; root export probe() -> string lets a test read the host's answer.
(component
  (import "murmur:runtime/inference@0.2.0" (instance $inf
    (type $msg (record (field "role" string) (field "content" string)))
    (export "message" (type $msg' (eq $msg)))
    (type $req (record (field "messages" (list $msg')) (field "system-prompt" (option string)) (field "model" (option string))))
    (export "inference-request" (type $req' (eq $req)))
    (type $resp (record (field "text" string) (field "model-used" string) (field "input-tokens" u64) (field "output-tokens" u64)))
    (export "inference-response" (type $resp' (eq $resp)))
    (export "run-inference" (func (param "request" $req') (result (result $resp' (error string)))))
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
  (core func $run (canon lower (func $inf "run-inference") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "inf" "run" (func $run (param i32 i32 i32 i32 i32 i32 i32 i32 i32)))
    (data (i32.const 2048) "ok:")
    (func (export "probe") (result i32)
      (call $run (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0)
        (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 4096))
      (if (i32.load8_u (i32.const 4096))
        (then                                   ;; err: its string at 4104
          (i32.store (i32.const 1024) (i32.load (i32.const 4104)))
          (i32.store (i32.const 1028) (i32.load (i32.const 4108))))
        (else
          (i32.store (i32.const 1024) (i32.const 2048))
          (i32.store (i32.const 1028) (i32.const 3))))
      (i32.const 1024)))
  (core instance $ci (export "run" (func $run)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "inf" (instance $ci))))
  (func (export "probe") (result string)
    (canon lift (core func $i "probe") (memory $mem) (realloc $realloc)))
)
