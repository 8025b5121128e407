;; Every WIT value kind makes a round trip: Go -> guest export -> host
;; import "echo-<kind>" -> back. Each export is the lifted form of the
;; lowered import, so values cross the canonical ABI both ways; exports whose
;; results do not fit one core value go through a wrapper that supplies a
;; return area. A bump allocator serves realloc and is reset by post-return.
(component
  (type $rec' (record (field "a" u32) (field "b" string)))
  (type $var' (variant (case "none") (case "num" u32) (case "text" string)))
  (type $enm' (enum "red" "green" "blue"))
  (type $flg' (flags "read" "write" "exec"))
  (import "rec" (type $rec (eq $rec')))
  (import "var" (type $var (eq $var')))
  (import "enm" (type $enm (eq $enm')))
  (import "flg" (type $flg (eq $flg')))

  (import "echo-bool" (func $echo-bool (param "x" bool) (result bool)))
  (import "echo-s8" (func $echo-s8 (param "x" s8) (result s8)))
  (import "echo-u8" (func $echo-u8 (param "x" u8) (result u8)))
  (import "echo-s16" (func $echo-s16 (param "x" s16) (result s16)))
  (import "echo-u16" (func $echo-u16 (param "x" u16) (result u16)))
  (import "echo-s32" (func $echo-s32 (param "x" s32) (result s32)))
  (import "echo-u32" (func $echo-u32 (param "x" u32) (result u32)))
  (import "echo-s64" (func $echo-s64 (param "x" s64) (result s64)))
  (import "echo-u64" (func $echo-u64 (param "x" u64) (result u64)))
  (import "echo-f32" (func $echo-f32 (param "x" f32) (result f32)))
  (import "echo-f64" (func $echo-f64 (param "x" f64) (result f64)))
  (import "echo-char" (func $echo-char (param "x" char) (result char)))
  (import "echo-enum" (func $echo-enum (param "x" $enm) (result $enm)))
  (import "echo-flags" (func $echo-flags (param "x" $flg) (result $flg)))
  (import "echo-string" (func $echo-string (param "x" string) (result string)))
  (import "echo-bytes" (func $echo-bytes (param "x" (list u8)) (result (list u8))))
  (import "echo-strings" (func $echo-strings (param "x" (list string)) (result (list string))))
  (import "echo-record" (func $echo-record (param "x" $rec) (result $rec)))
  (import "echo-tuple" (func $echo-tuple (param "x" (tuple u8 s64)) (result (tuple u8 s64))))
  (import "echo-variant" (func $echo-variant (param "x" $var) (result $var)))
  (import "echo-option" (func $echo-option (param "x" (option u32)) (result (option u32))))
  (import "echo-result" (func $echo-result (param "x" (result u32 (error string))) (result (result u32 (error string)))))

  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 4096))
    ;; realloc(old, old_size, align, size): bump allocation, growing memory.
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32) (local $end i32)
      global.get $bump
      local.get 2
      i32.add
      i32.const 1
      i32.sub
      i32.const 0
      local.get 2
      i32.sub
      i32.and
      local.tee $p
      local.get 3
      i32.add
      local.tee $end
      global.set $bump
      block
        loop
          local.get $end
          memory.size
          i32.const 16
          i32.shl
          i32.le_u
          br_if 1
          i32.const 1
          memory.grow
          i32.const -1
          i32.eq
          if unreachable end
          br 0
        end
      end
      local.get $p)
    (func (export "reset") (param i32)
      i32.const 4096
      global.set $bump)
  )
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (alias core export $libc "reset" (core func $reset))

  (core func $l-bool (canon lower (func $echo-bool)))
  (core func $l-s8 (canon lower (func $echo-s8)))
  (core func $l-u8 (canon lower (func $echo-u8)))
  (core func $l-s16 (canon lower (func $echo-s16)))
  (core func $l-u16 (canon lower (func $echo-u16)))
  (core func $l-s32 (canon lower (func $echo-s32)))
  (core func $l-u32 (canon lower (func $echo-u32)))
  (core func $l-s64 (canon lower (func $echo-s64)))
  (core func $l-u64 (canon lower (func $echo-u64)))
  (core func $l-f32 (canon lower (func $echo-f32)))
  (core func $l-f64 (canon lower (func $echo-f64)))
  (core func $l-char (canon lower (func $echo-char)))
  (core func $l-enum (canon lower (func $echo-enum)))
  (core func $l-flags (canon lower (func $echo-flags)))
  (core func $l-string (canon lower (func $echo-string) (memory $mem) (realloc $realloc)))
  (core func $l-bytes (canon lower (func $echo-bytes) (memory $mem) (realloc $realloc)))
  (core func $l-strings (canon lower (func $echo-strings) (memory $mem) (realloc $realloc)))
  (core func $l-record (canon lower (func $echo-record) (memory $mem) (realloc $realloc)))
  (core func $l-tuple (canon lower (func $echo-tuple) (memory $mem) (realloc $realloc)))
  (core func $l-variant (canon lower (func $echo-variant) (memory $mem) (realloc $realloc)))
  (core func $l-option (canon lower (func $echo-option) (memory $mem) (realloc $realloc)))
  (core func $l-result (canon lower (func $echo-result) (memory $mem) (realloc $realloc)))

  ;; Wrappers give the lowered imports (which write results to a return
  ;; pointer) the lifted shape (which returns a pointer to the results).
  (core module $wrap
    (import "l" "string" (func $string (param i32 i32 i32)))
    (import "l" "bytes" (func $bytes (param i32 i32 i32)))
    (import "l" "strings" (func $strings (param i32 i32 i32)))
    (import "l" "record" (func $record (param i32 i32 i32 i32)))
    (import "l" "tuple" (func $tuple (param i32 i64 i32)))
    (import "l" "variant" (func $variant (param i32 i32 i32 i32)))
    (import "l" "option" (func $option (param i32 i32 i32)))
    (import "l" "result" (func $result (param i32 i32 i32 i32)))
    (func (export "string") (param i32 i32) (result i32)
      local.get 0 local.get 1 i32.const 1024 call $string i32.const 1024)
    (func (export "bytes") (param i32 i32) (result i32)
      local.get 0 local.get 1 i32.const 1024 call $bytes i32.const 1024)
    (func (export "strings") (param i32 i32) (result i32)
      local.get 0 local.get 1 i32.const 1024 call $strings i32.const 1024)
    (func (export "record") (param i32 i32 i32) (result i32)
      local.get 0 local.get 1 local.get 2 i32.const 1024 call $record i32.const 1024)
    (func (export "tuple") (param i32 i64) (result i32)
      local.get 0 local.get 1 i32.const 1024 call $tuple i32.const 1024)
    (func (export "variant") (param i32 i32 i32) (result i32)
      local.get 0 local.get 1 local.get 2 i32.const 1024 call $variant i32.const 1024)
    (func (export "option") (param i32 i32) (result i32)
      local.get 0 local.get 1 i32.const 1024 call $option i32.const 1024)
    (func (export "result") (param i32 i32 i32) (result i32)
      local.get 0 local.get 1 local.get 2 i32.const 1024 call $result i32.const 1024)
  )
  (core instance $l
    (export "string" (func $l-string))
    (export "bytes" (func $l-bytes))
    (export "strings" (func $l-strings))
    (export "record" (func $l-record))
    (export "tuple" (func $l-tuple))
    (export "variant" (func $l-variant))
    (export "option" (func $l-option))
    (export "result" (func $l-result)))
  (core instance $w (instantiate $wrap (with "l" (instance $l))))

  (export $rec-x "rec" (type $rec))
  (export $var-x "var" (type $var))
  (export $enm-x "enm" (type $enm))
  (export $flg-x "flg" (type $flg))

  (func (export "echo-bool") (param "x" bool) (result bool) (canon lift (core func $l-bool)))
  (func (export "echo-s8") (param "x" s8) (result s8) (canon lift (core func $l-s8)))
  (func (export "echo-u8") (param "x" u8) (result u8) (canon lift (core func $l-u8)))
  (func (export "echo-s16") (param "x" s16) (result s16) (canon lift (core func $l-s16)))
  (func (export "echo-u16") (param "x" u16) (result u16) (canon lift (core func $l-u16)))
  (func (export "echo-s32") (param "x" s32) (result s32) (canon lift (core func $l-s32)))
  (func (export "echo-u32") (param "x" u32) (result u32) (canon lift (core func $l-u32)))
  (func (export "echo-s64") (param "x" s64) (result s64) (canon lift (core func $l-s64)))
  (func (export "echo-u64") (param "x" u64) (result u64) (canon lift (core func $l-u64)))
  (func (export "echo-f32") (param "x" f32) (result f32) (canon lift (core func $l-f32)))
  (func (export "echo-f64") (param "x" f64) (result f64) (canon lift (core func $l-f64)))
  (func (export "echo-char") (param "x" char) (result char) (canon lift (core func $l-char)))
  (func (export "echo-enum") (param "x" $enm-x) (result $enm-x) (canon lift (core func $l-enum)))
  (func (export "echo-flags") (param "x" $flg-x) (result $flg-x) (canon lift (core func $l-flags)))
  (func (export "echo-string") (param "x" string) (result string)
    (canon lift (core func $w "string") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-bytes") (param "x" (list u8)) (result (list u8))
    (canon lift (core func $w "bytes") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-strings") (param "x" (list string)) (result (list string))
    (canon lift (core func $w "strings") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-record") (param "x" $rec-x) (result $rec-x)
    (canon lift (core func $w "record") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-tuple") (param "x" (tuple u8 s64)) (result (tuple u8 s64))
    (canon lift (core func $w "tuple") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-variant") (param "x" $var-x) (result $var-x)
    (canon lift (core func $w "variant") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-option") (param "x" (option u32)) (result (option u32))
    (canon lift (core func $w "option") (memory $mem) (realloc $realloc) (post-return $reset)))
  (func (export "echo-result") (param "x" (result u32 (error string))) (result (result u32 (error string)))
    (canon lift (core func $w "result") (memory $mem) (realloc $realloc) (post-return $reset)))
)
