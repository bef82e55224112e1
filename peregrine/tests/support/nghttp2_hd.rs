//! Safe wrappers over nghttp2's HPACK codec (`nghttp2_hd_deflate_*`, `nghttp2_hd_inflate_*`
//! through libnghttp2-sys), for the corpus test and the hpack bench:
//! `#[path = ".../support/nghttp2_hd.rs"] mod nghttp2_hd;`.
#![allow(unsafe_code, dead_code)]

use libnghttp2_sys as ng;

/// An nghttp2 deflater (encoder).
pub struct Deflater(*mut ng::nghttp2_hd_deflater);

impl Deflater {
    /// With nghttp2's own table cap of 4,096 (as in `nghttp2_session`).
    pub fn new() -> Deflater {
        let mut p = std::ptr::null_mut();
        // SAFETY: `p` is a valid out pointer; the return code is checked.
        let rc = unsafe { ng::nghttp2_hd_deflate_new(&mut p, 4096) };
        assert_eq!(rc, 0, "nghttp2_hd_deflate_new");
        Deflater(p)
    }

    /// Appends the block for `nvs` to `dst`; `nvs` is scratch for the nghttp2_nv array.
    pub fn deflate(
        &mut self,
        fields: &[(&[u8], &[u8])],
        nvs: &mut Vec<ng::nghttp2_nv>,
        dst: &mut Vec<u8>,
    ) {
        nvs.clear();
        nvs.extend(fields.iter().map(|(n, v)| ng::nghttp2_nv {
            name: n.as_ptr().cast_mut(),
            value: v.as_ptr().cast_mut(),
            namelen: n.len(),
            valuelen: v.len(),
            flags: (ng::NGHTTP2_NV_FLAG_NO_COPY_NAME | ng::NGHTTP2_NV_FLAG_NO_COPY_VALUE) as u8,
        }));
        // SAFETY: the deflater is live; `nvs` points at `nvs.len()` entries whose name and
        // value pointers are valid for their lengths during the call (nghttp2 only reads them).
        let bound = unsafe { ng::nghttp2_hd_deflate_bound(self.0, nvs.as_ptr(), nvs.len()) };
        dst.reserve(bound);
        let start = dst.len();
        // SAFETY: `dst` has `bound` writable bytes after `start` (reserved above), which is
        // what nghttp2 may write; the nv array is as above. The result is checked before use.
        let n = unsafe {
            ng::nghttp2_hd_deflate_hd(
                self.0,
                dst.as_mut_ptr().add(start),
                bound,
                nvs.as_ptr(),
                nvs.len(),
            )
        };
        assert!(n >= 0, "nghttp2_hd_deflate_hd: {n}");
        // SAFETY: nghttp2 initialised `n` bytes after `start`.
        unsafe { dst.set_len(start + n as usize) };
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: created by nghttp2_hd_deflate_new, freed once.
        unsafe { ng::nghttp2_hd_deflate_del(self.0) }
    }
}

/// An nghttp2 inflater (decoder).
pub struct Inflater(*mut ng::nghttp2_hd_inflater);

impl Inflater {
    pub fn new() -> Inflater {
        let mut p = std::ptr::null_mut();
        // SAFETY: `p` is a valid out pointer; the return code is checked.
        let rc = unsafe { ng::nghttp2_hd_inflate_new(&mut p) };
        assert_eq!(rc, 0, "nghttp2_hd_inflate_new");
        Inflater(p)
    }

    /// Our SETTINGS_HEADER_TABLE_SIZE changed.
    pub fn change_table_size(&mut self, n: usize) {
        // SAFETY: the inflater is live.
        let rc = unsafe { ng::nghttp2_hd_inflate_change_table_size(self.0, n) };
        assert_eq!(rc, 0);
    }

    /// Decodes one complete block, calling `f(name, value)` per field; false on an error.
    pub fn inflate(&mut self, mut block: &[u8], mut f: impl FnMut(&[u8], &[u8])) -> bool {
        loop {
            let mut nv = std::mem::MaybeUninit::<ng::nghttp2_nv>::uninit();
            let mut flags = 0;
            // SAFETY: the inflater is live; `block` is valid for its length; `nv` and `flags`
            // are valid out pointers. `in_final` = 1: the block is complete.
            let n = unsafe {
                ng::nghttp2_hd_inflate_hd2(
                    self.0,
                    nv.as_mut_ptr(),
                    &mut flags,
                    block.as_ptr(),
                    block.len(),
                    1,
                )
            };
            if n < 0 {
                return false;
            }
            block = &block[n as usize..];
            if flags & ng::NGHTTP2_HD_INFLATE_EMIT as i32 != 0 {
                // SAFETY: EMIT means nghttp2 filled `nv`; its pointers are valid for their
                // lengths until the next inflate call.
                let (name, value) = unsafe {
                    let nv = nv.assume_init();
                    (
                        std::slice::from_raw_parts(nv.name, nv.namelen),
                        std::slice::from_raw_parts(nv.value, nv.valuelen),
                    )
                };
                f(name, value);
            }
            if flags & ng::NGHTTP2_HD_INFLATE_FINAL as i32 != 0 {
                // SAFETY: the inflater is live.
                unsafe { ng::nghttp2_hd_inflate_end_headers(self.0) };
                return true;
            }
            if flags & ng::NGHTTP2_HD_INFLATE_EMIT as i32 == 0 && block.is_empty() {
                return true;
            }
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: created by nghttp2_hd_inflate_new, freed once.
        unsafe { ng::nghttp2_hd_inflate_del(self.0) }
    }
}
