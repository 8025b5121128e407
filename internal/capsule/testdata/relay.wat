;; A tool-world component that calls murmur:tool-registry/invoke@0.1.0
;; invoke("%CALLEE%", {data: "{}"}) and returns what it got: on ok, the
;; callee's status and its data (else its summary); on err, status error with the error text as
;; data. The test replaces %CALLEE% and %LEN% (the name's length).
(component $outer
  (type $st' (enum "passed" "failed" "error"))
  (type $in' (record (field "data" (option string)) (field "log-path" (option string))))
  (type $res' (record (field "status" $st') (field "summary" (option string)) (field "data" (option string))
    (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
  (import "murmur:tool-registry/invoke@0.1.0" (instance $reg
    (type $st (enum "passed" "failed" "error"))
    (export "status" (type $st' (eq $st)))
    (type $in (record (field "data" (option string)) (field "log-path" (option string))))
    (export "tool-input" (type $in' (eq $in)))
    (type $res (record (field "status" $st') (field "summary" (option string)) (field "data" (option string))
      (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
    (export "tool-result" (type $res' (eq $res)))
    (export "invoke" (func (param "name" string) (param "input" $in') (result (result $res' (error string)))))
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
  (core func $invoke (canon lower (func $reg "invoke") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "reg" "invoke" (func $invoke (param i32 i32 i32 i32 i32 i32 i32 i32 i32)))
    (data (i32.const 2048) "relayed")
    (data (i32.const 2100) "{}")
    (data (i32.const 2200) "%CALLEE%")
    (func (export "run") (param i32 i32 i32 i32 i32 i32) (result i32)
      ;; invoke(name, {data: some("{}"), log-path: none}) -> result at 5000
      (call $invoke (i32.const 2200) (i32.const %LEN%)
        (i32.const 1) (i32.const 2100) (i32.const 2)
        (i32.const 0) (i32.const 0) (i32.const 0)
        (i32.const 5000))
      (i32.store8 (i32.const 1028) (i32.const 1))          ;; summary "relayed"
      (i32.store (i32.const 1032) (i32.const 2048))
      (i32.store (i32.const 1036) (i32.const 7))
      (if (i32.eqz (i32.load8_u (i32.const 5000)))
        (then
          (i32.store8 (i32.const 1024) (i32.load8_u (i32.const 5004)))  ;; the callee's status
          (i32.store8 (i32.const 1040) (i32.const 1))
          (if (i32.load8_u (i32.const 5020))
            (then                                          ;; the callee's data
              (i32.store (i32.const 1044) (i32.load (i32.const 5024)))
              (i32.store (i32.const 1048) (i32.load (i32.const 5028))))
            (else                                          ;; else its summary
              (i32.store8 (i32.const 1040) (i32.load8_u (i32.const 5008)))
              (i32.store (i32.const 1044) (i32.load (i32.const 5012)))
              (i32.store (i32.const 1048) (i32.load (i32.const 5016))))))
        (else
          (i32.store8 (i32.const 1024) (i32.const 2))      ;; error
          (i32.store8 (i32.const 1040) (i32.const 1))      ;; data: the error text
          (i32.store (i32.const 1044) (i32.load (i32.const 5004)))
          (i32.store (i32.const 1048) (i32.load (i32.const 5008)))))
      (i32.store8 (i32.const 1052) (i32.const 0))          ;; data-path none
      (i32.store8 (i32.const 1064) (i32.const 0))          ;; truncated false
      (i32.store (i32.const 1068) (i32.const 0))           ;; no metadata
      (i32.store (i32.const 1072) (i32.const 0))
      (i32.const 1024)))
  (core instance $ci (export "invoke" (func $invoke)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "reg" (instance $ci))))
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
