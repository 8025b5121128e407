;; A minimal tool-world component in component text: it exports
;; murmur:tool/run@0.1.0 whose run echoes the input's data back with status
;; passed, summary "echoed", and metadata state_effect=read, resource_id=echo.
;; It imports murmur:text/chunks@0.1.0 and emits the data as one chunk first.
(component $outer
  (type $st' (enum "passed" "failed" "error"))
  (type $in' (record (field "data" (option string)) (field "log-path" (option string))))
  (import "murmur:text/chunks@0.1.0" (instance $chunks
    (export "emit" (func (param "text" string) (result (result (error string)))))
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
  (core func $emit (canon lower (func $chunks "emit") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "chunks" "emit" (func $emit (param i32 i32 i32)))
    (data (i32.const 2048) "echoed")
    (data (i32.const 2100) "state_effect")
    (data (i32.const 2120) "read")
    (data (i32.const 2130) "resource_id")
    (data (i32.const 2150) "echo")
    ;; run(data?, log-path?) -> ptr to tool-result at 1024
    (func (export "run") (param $dd i32) (param $dp i32) (param $dl i32) (param i32 i32 i32) (result i32)
      (if (local.get $dd) (then (call $emit (local.get $dp) (local.get $dl) (i32.const 4000))))
      (i32.store8 (i32.const 1024) (i32.const 0))          ;; status passed
      (i32.store8 (i32.const 1028) (i32.const 1))          ;; summary some
      (i32.store (i32.const 1032) (i32.const 2048))
      (i32.store (i32.const 1036) (i32.const 6))
      (i32.store8 (i32.const 1040) (local.get $dd))        ;; data = input data
      (i32.store (i32.const 1044) (local.get $dp))
      (i32.store (i32.const 1048) (local.get $dl))
      (i32.store8 (i32.const 1052) (i32.const 0))          ;; data-path none
      (i32.store8 (i32.const 1064) (i32.const 0))          ;; truncated false
      (i32.store (i32.const 1068) (i32.const 3000))        ;; metadata ptr
      (i32.store (i32.const 1072) (i32.const 2))           ;; metadata len
      (i32.store (i32.const 3000) (i32.const 2100))
      (i32.store (i32.const 3004) (i32.const 12))
      (i32.store (i32.const 3008) (i32.const 2120))
      (i32.store (i32.const 3012) (i32.const 4))
      (i32.store (i32.const 3016) (i32.const 2130))
      (i32.store (i32.const 3020) (i32.const 11))
      (i32.store (i32.const 3024) (i32.const 2150))
      (i32.store (i32.const 3028) (i32.const 4))
      (i32.const 1024)))
  (core instance $ci (export "emit" (func $emit)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "chunks" (instance $ci))))
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
    ;; The exported types are fresh definitions, as wit-component's shim
    ;; makes them: an instance may export only types it names itself.
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
