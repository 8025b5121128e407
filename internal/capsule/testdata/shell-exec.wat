;; A tool-world component that calls murmur:shell/execute@0.1.0 run("echo",
;; ["from-wasm"], []) and returns what it got: on ok, status passed with the
;; command's stdout as data; on err, status error with the error text.
(component $outer
  (type $st' (enum "passed" "failed" "error"))
  (type $in' (record (field "data" (option string)) (field "log-path" (option string))))
  (import "murmur:shell/execute@0.1.0" (instance $sh
    (type $r (record (field "exit-code" s32) (field "stdout" string) (field "stderr" string)
      (field "truncated" bool) (field "full-output-path" (option string))))
    (export "shell-result" (type $r' (eq $r)))
    (export "run" (func (param "binary" string) (param "args" (list string))
      (param "env" (list (tuple string string))) (result (result $r' (error string)))))
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
      local.get $p)
    (func (export "reset") (param i32)
      i32.const 8192 global.set $bump))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (alias core export $libc "reset" (core func $reset))
  (core func $shrun (canon lower (func $sh "run") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "sh" "run" (func $shrun (param i32 i32 i32 i32 i32 i32 i32)))
    (data (i32.const 2048) "ran")
    (data (i32.const 2200) "echo")
    (data (i32.const 2210) "from-wasm")
    (func (export "run") (param i32 i32 i32 i32 i32 i32) (result i32)
      ;; args: one string, "from-wasm"
      (i32.store (i32.const 2300) (i32.const 2210))
      (i32.store (i32.const 2304) (i32.const 9))
      (call $shrun (i32.const 2200) (i32.const 4) (i32.const 2300) (i32.const 1)
        (i32.const 0) (i32.const 0) (i32.const 5000))
      (i32.store8 (i32.const 1028) (i32.const 1))          ;; summary "ran"
      (i32.store (i32.const 1032) (i32.const 2048))
      (i32.store (i32.const 1036) (i32.const 3))
      (i32.store8 (i32.const 1040) (i32.const 1))          ;; data some
      (if (i32.eqz (i32.load8_u (i32.const 5000)))
        (then
          (i32.store8 (i32.const 1024) (i32.const 0))      ;; passed
          (i32.store (i32.const 1044) (i32.load (i32.const 5008)))   ;; stdout
          (i32.store (i32.const 1048) (i32.load (i32.const 5012))))
        (else
          (i32.store8 (i32.const 1024) (i32.const 2))      ;; error
          (i32.store (i32.const 1044) (i32.load (i32.const 5004)))   ;; the error text
          (i32.store (i32.const 1048) (i32.load (i32.const 5008)))))
      (i32.store8 (i32.const 1052) (i32.const 0))          ;; data-path none
      (i32.store8 (i32.const 1064) (i32.const 0))          ;; truncated false
      (i32.store (i32.const 1068) (i32.const 0))           ;; no metadata
      (i32.store (i32.const 1072) (i32.const 0))
      (i32.const 1024)))
  (core instance $ci (export "run" (func $shrun)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "sh" (instance $ci))))
  (type $res' (record (field "status" $st') (field "summary" (option string)) (field "data" (option string))
    (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
  (component $inner
    (alias outer $outer $st' (type $st-o))
    (alias outer $outer $in' (type $in-o))
    (import "status-in" (type $st (eq $st-o)))
    (import "tool-input-in" (type $in (eq $in-o)))
    (type $res-l (record (field "status" $st) (field "summary" (option string)) (field "data" (option string))
      (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
    (import "tool-result-in" (type $res (eq $res-l)))
    (import "run-in" (func $run (param "input" $in) (result $res)))
    (type $st-d (enum "passed" "failed" "error"))
    (export $st-x "status" (type $st-d))
    (type $in-d (record (field "data" (option string)) (field "log-path" (option string))))
    (export $in-x "tool-input" (type $in-d))
    (type $res-d (record (field "status" $st-x) (field "summary" (option string)) (field "data" (option string))
      (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
    (export $res-x "tool-result" (type $res-d))
    (export "run" (func $run) (func (param "input" $in-x) (result $res-x))))
  (func $run (param "input" $in') (result $res')
    (canon lift (core func $i "run") (memory $mem) (realloc $realloc) (post-return $reset)))
  (instance $tool (instantiate $inner
    (with "status-in" (type $st'))
    (with "tool-input-in" (type $in'))
    (with "tool-result-in" (type $res'))
    (with "run-in" (func $run))))
  (export "murmur:tool/run@0.1.0" (instance $tool))
)
