//! Every view op: shape, strides and offset as PyTorch (or NumPy, for
//! negative strides), the values read through the view, storage sharing,
//! and the errors.

mod common;

use common::{assert_reads, iota};
use stridemem::{DType, Device, Status, Tensor};

#[test]
fn view_reshapes_compatible_strides() {
    let (t, data) = iota(&[2, 3, 4]);
    let v = t.view(&[6, 4]).unwrap();
    assert_eq!((v.shape(), v.strides()), (&[6i64, 4][..], &[4i64, 1][..]));
    assert!(v.same_storage(&t).unwrap());
    assert_eq!(v.data_ptr().unwrap(), t.data_ptr().unwrap());
    assert_reads(&v, &data);
    let inferred = t.view(&[-1, 8]).unwrap();
    assert_eq!(inferred.shape(), &[3, 8]);
    assert_eq!(t.view(&[24]).unwrap().to_vec::<f32>().unwrap(), data);
    // A narrowed dim can still be split/merged where strides agree.
    let n = t.narrow(2, 0, 2).unwrap(); // [2, 3, 2], strides [12, 4, 1]
    assert_eq!(n.view(&[2, 3, 2, 1]).unwrap().strides(), &[12, 4, 1, 1]);
}

#[test]
fn view_refuses_incompatible_strides_and_explains() {
    let (t, _) = iota(&[2, 3, 4]);
    let tt = t.transpose(1, 2).unwrap();
    let err = tt.view(&[2, 12]).unwrap_err();
    assert_eq!(err.status(), Status::Shape);
    assert!(err.message().to_lowercase().contains("reshape"), "should suggest reshape: {err}");
    // Numel mismatch, two -1.
    assert_eq!(t.view(&[5, 5]).unwrap_err().status(), Status::Shape);
    assert!(t.view(&[-1, -1]).is_err());
}

#[test]
fn as_strided_any_layout_within_bounds() {
    let (t, data) = iota(&[10]);
    // Overlapping sliding windows.
    let w = t.as_strided(&[4, 3], &[2, 1], 1).unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![1., 2., 3., 3., 4., 5., 5., 6., 7., 7., 8., 9.]);
    assert_eq!(w.storage_offset(), 1);
    assert_reads(&w, &data);
    // Negative stride from the end.
    let r = t.as_strided(&[5], &[-2], 9).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![9., 7., 5., 3., 1.]);
    // Offset is absolute, not relative to a view's offset.
    let n = t.narrow(0, 5, 5).unwrap();
    assert_eq!(n.as_strided(&[2], &[1], 0).unwrap().to_vec::<f32>().unwrap(), vec![0., 1.]);
    // Escaping the storage.
    assert_eq!(t.as_strided(&[4, 3], &[3, 1], 0).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.as_strided(&[3], &[-1], 1).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.as_strided(&[2], &[1], -1).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.as_strided(&[2, 2], &[1], 0).unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn slice_follows_python() {
    let (t, data) = iota(&[10]);
    let s = |start, stop, step| t.slice(0, start, stop, step).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(s(Some(2), Some(8), 3), vec![2., 5.]);
    assert_eq!(s(None, None, 4), vec![0., 4., 8.]);
    assert_eq!(s(Some(-3), None, 1), vec![7., 8., 9.]);
    assert_eq!(s(None, Some(-8), 1), vec![0., 1.]);
    assert_eq!(s(Some(-100), Some(100), 5), vec![0., 5.]); // clamped
    assert_eq!(s(Some(8), Some(2), 1), Vec::<f32>::new()); // empty, not an error
    // Negative steps: views with negative strides, never copies.
    assert_eq!(s(None, None, -1), vec![9., 8., 7., 6., 5., 4., 3., 2., 1., 0.]);
    assert_eq!(s(Some(8), Some(2), -3), vec![8., 5.]);
    assert_eq!(s(Some(-2), None, -4), vec![8., 4., 0.]);
    let rev = t.slice(0, None, None, -1).unwrap();
    assert_eq!(rev.strides(), &[-1]);
    assert_eq!(rev.storage_offset(), 9);
    assert!(rev.same_storage(&t).unwrap());
    assert_reads(&rev, &data);
    assert_eq!(t.slice(0, None, None, 0).unwrap_err().status(), Status::InvalidArgument);
    assert_eq!(t.slice(1, None, None, 1).unwrap_err().status(), Status::OutOfBounds);
    // 2-D, along the last dim by a negative dim index.
    let (m, mdata) = iota(&[3, 4]);
    let cols = m.slice(-1, Some(1), None, 2).unwrap();
    assert_eq!(cols.shape(), &[3, 2]);
    assert_eq!(cols.strides(), &[4, 2]);
    assert_reads(&cols, &mdata);
}

#[test]
fn narrow_does_not_clamp() {
    let (t, data) = iota(&[4, 6]);
    let n = t.narrow(1, 2, 3).unwrap();
    assert_eq!((n.shape(), n.strides(), n.storage_offset()), (&[4i64, 3][..], &[6i64, 1][..], 2));
    assert_reads(&n, &data);
    let neg = t.narrow(0, -2, 2).unwrap();
    assert_eq!(neg.to_vec::<f32>().unwrap(), data[12..].to_vec());
    assert_eq!(t.narrow(1, 4, 3).unwrap_err().status(), Status::OutOfBounds);
    let negative = t.narrow(0, 0, -1).unwrap_err().status();
    assert!(matches!(negative, Status::OutOfBounds | Status::Shape | Status::InvalidArgument), "{negative:?}");
    assert_eq!(t.narrow(2, 0, 1).unwrap_err().status(), Status::OutOfBounds);
    assert!(t.narrow(1, 6, 0).unwrap().is_empty());
}

#[test]
fn select_removes_a_dim() {
    let (t, data) = iota(&[3, 4, 5]);
    let s = t.select(1, 2).unwrap();
    assert_eq!((s.shape(), s.strides(), s.storage_offset()), (&[3i64, 5][..], &[20i64, 1][..], 10));
    assert_reads(&s, &data);
    let last = t.select(0, -1).unwrap();
    assert_eq!(last.storage_offset(), 40);
    let scalar = t.select(0, 1).unwrap().select(0, 1).unwrap().select(0, 1).unwrap();
    assert_eq!(scalar.ndim(), 0);
    assert_eq!(scalar.to_vec::<f32>().unwrap(), vec![26.0]);
    assert_eq!(t.select(0, 3).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.select(0, -4).unwrap_err().status(), Status::OutOfBounds);
    assert_eq!(t.select(3, 0).unwrap_err().status(), Status::OutOfBounds);
}

#[test]
fn permute_transpose_movedim() {
    let (t, data) = iota(&[2, 3, 4]);
    let p = t.permute(&[2, 0, 1]).unwrap();
    assert_eq!((p.shape(), p.strides()), (&[4i64, 2, 3][..], &[1i64, 12, 4][..]));
    assert_reads(&p, &data);
    assert_eq!(t.permute(&[-1, 0, 1]).unwrap().shape(), &[4, 2, 3]);
    assert!(t.permute(&[0, 0, 1]).is_err());
    assert!(t.permute(&[0, 1]).is_err());

    let tr = t.transpose(0, 2).unwrap();
    assert_eq!((tr.shape(), tr.strides()), (&[4i64, 3, 2][..], &[1i64, 4, 12][..]));
    assert_reads(&tr, &data);
    assert_eq!(t.transpose(0, 3).unwrap_err().status(), Status::OutOfBounds);

    let m = t.movedim(&[0], &[2]).unwrap();
    assert_eq!((m.shape(), m.strides()), (&[3i64, 4, 2][..], &[4i64, 1, 12][..]));
    assert_reads(&m, &data);
    let m2 = t.movedim(&[0, 1], &[-1, 0]).unwrap();
    assert_eq!(m2.shape(), &[3, 4, 2]);
    assert_eq!(t.movedim(&[0], &[1, 2]).unwrap_err().status(), Status::InvalidArgument);
}

#[test]
fn expand_uses_stride_zero() {
    let (t, _) = iota(&[3, 1]);
    let e = t.expand(&[2, 3, 4]).unwrap();
    assert_eq!((e.shape(), e.strides()), (&[2i64, 3, 4][..], &[0i64, 1, 0][..]));
    let v = e.to_vec::<f32>().unwrap();
    assert_eq!(&v[..12], &[0., 0., 0., 0., 1., 1., 1., 1., 2., 2., 2., 2.]);
    assert_eq!(&v[12..], &v[..12]);
    assert!(e.same_storage(&t).unwrap());
    assert_eq!(t.expand(&[-1, 5]).unwrap().shape(), &[3, 5]);
    assert_eq!(t.expand(&[4, 4]).unwrap_err().status(), Status::Shape);
    assert!(t.expand(&[3]).is_err());
}

#[test]
fn squeeze_and_unsqueeze() {
    let (t, data) = iota(&[1, 3, 1, 2]);
    assert_eq!(t.squeeze_all().unwrap().shape(), &[3, 2]);
    assert_eq!(t.squeeze(&[]).unwrap().shape(), &[3, 2]);
    assert_eq!(t.squeeze(&[2]).unwrap().shape(), &[1, 3, 2]);
    // A listed dim that is not size 1 stays, as PyTorch.
    assert_eq!(t.squeeze(&[1, -2]).unwrap().shape(), &[1, 3, 2]);
    assert!(t.squeeze(&[7]).is_err());
    let u = t.squeeze_all().unwrap().unsqueeze(1).unwrap();
    assert_eq!(u.shape(), &[3, 1, 2]);
    assert_reads(&u, &data);
    assert_eq!(u.unsqueeze(-1).unwrap().shape(), &[3, 1, 2, 1]);
    assert_eq!(u.unsqueeze(3).unwrap().shape(), &[3, 1, 2, 1]);
    assert!(u.unsqueeze(5).is_err());
}

#[test]
fn flatten_and_unflatten() {
    let (t, data) = iota(&[2, 3, 4]);
    let f = t.flatten(1, 2).unwrap();
    assert_eq!((f.shape(), f.strides()), (&[2i64, 12][..], &[12i64, 1][..]));
    assert!(f.same_storage(&t).unwrap());
    assert_eq!(t.flatten(0, -1).unwrap().shape(), &[24]);
    let n = t.narrow(1, 0, 2).unwrap(); // [2, 2, 4] strides [12, 4, 1]
    assert_eq!(n.flatten(0, 1).unwrap_err().status(), Status::Shape);
    let nf = n.flatten(1, 2).unwrap(); // 4 == 1 * 4: mergeable
    assert_eq!((nf.shape(), nf.strides()), (&[2i64, 8][..], &[12i64, 1][..]));
    assert_reads(&nf, &data);
    let tt = t.transpose(0, 1).unwrap(); // [3, 2, 4] strides [4, 12, 1]
    assert_eq!(tt.flatten(0, 1).unwrap_err().status(), Status::Shape);
    let u = f.unflatten(1, &[4, -1]).unwrap();
    assert_eq!((u.shape(), u.strides()), (&[2i64, 4, 3][..], &[12i64, 3, 1][..]));
    assert_reads(&u, &data);
    assert_eq!(f.unflatten(1, &[5, -1]).unwrap_err().status(), Status::Shape);
    // Unflatten of a strided dim is still a view.
    let uu = tt.unflatten(2, &[2, 2]).unwrap();
    assert_eq!(uu.strides(), &[4, 12, 2, 1]);
    assert_reads(&uu, &data);
}

#[test]
fn unfold_gives_overlapping_windows() {
    let (t, data) = iota(&[3, 7]);
    let w = t.unfold(1, 3, 2).unwrap();
    assert_eq!((w.shape(), w.strides()), (&[3i64, 3, 3][..], &[7i64, 2, 1][..]));
    assert_reads(&w, &data);
    assert_eq!(w.select(0, 0).unwrap().to_vec::<f32>().unwrap(), vec![0., 1., 2., 2., 3., 4., 4., 5., 6.]);
    // 2-D tiles: unfold twice.
    let (img, idata) = iota(&[6, 6]);
    let tiles = img.unfold(0, 4, 2).unwrap().unfold(1, 4, 2).unwrap();
    assert_eq!(tiles.shape(), &[2, 2, 4, 4]);
    assert_eq!(tiles.strides(), &[12, 2, 6, 1]);
    assert_reads(&tiles, &idata);
    assert!(tiles.same_storage(&img).unwrap());
    assert!(t.unfold(1, 8, 1).is_err());
    assert!(t.unfold(1, 3, 0).is_err());
}

#[test]
fn diagonal_with_offsets() {
    let (t, _) = iota(&[3, 4]);
    let d = t.diagonal(0, 0, 1).unwrap();
    assert_eq!((d.shape(), d.strides()), (&[3i64][..], &[5i64][..]));
    assert_eq!(d.to_vec::<f32>().unwrap(), vec![0., 5., 10.]);
    assert_eq!(t.diagonal(1, 0, 1).unwrap().to_vec::<f32>().unwrap(), vec![1., 6., 11.]);
    assert_eq!(t.diagonal(-1, 0, 1).unwrap().to_vec::<f32>().unwrap(), vec![4., 9.]);
    assert_eq!(t.diagonal(2, 1, 0).unwrap().to_vec::<f32>().unwrap(), vec![8.]);
    assert!(t.diagonal(10, 0, 1).unwrap().is_empty());
    let (b, bdata) = iota(&[2, 3, 3]);
    let bd = b.diagonal(0, 1, 2).unwrap();
    assert_eq!(bd.shape(), &[2, 3]);
    assert_reads(&bd, &bdata);
    assert!(t.diagonal(0, 0, 0).is_err());
}

#[test]
fn split_and_chunk_give_views() {
    let (t, data) = iota(&[7, 2]);
    let parts = t.split(3, 0).unwrap();
    assert_eq!(parts.iter().map(|p| p.shape()[0]).collect::<Vec<_>>(), vec![3, 3, 1]);
    for p in &parts {
        assert!(p.same_storage(&t).unwrap());
        assert_reads(p, &data);
    }
    assert_eq!(parts[2].storage_offset(), 12);
    // ceil(7 / 3) = 3 per chunk: 3, 3, 1.
    let c = t.chunk(3, 0).unwrap();
    assert_eq!(c.iter().map(|p| p.shape()[0]).collect::<Vec<_>>(), vec![3, 3, 1]);
    // ceil(6 / 4) = 2 per chunk: only 3 chunks (fewer than asked).
    let (u, _) = iota(&[6]);
    assert_eq!(u.chunk(4, 0).unwrap().len(), 3);
    assert_eq!(t.split(1, 1).unwrap().len(), 2);
    let halves = t.split(1, -1).unwrap();
    assert_eq!((halves[1].shape(), halves[1].strides()), (&[7i64, 1][..], &[2i64, 1][..]));
    assert_eq!(halves[1].storage_offset(), 1);
    assert!(t.split(0, 0).is_err());
    assert!(t.chunk(0, 0).is_err());
    assert!(t.split(2, 2).is_err());
}

#[test]
fn flip_is_a_negative_stride_view() {
    let (t, data) = iota(&[2, 3]);
    let f = t.flip(&[1]).unwrap();
    assert_eq!(f.strides(), &[3, -1]);
    assert_eq!(f.to_vec::<f32>().unwrap(), vec![2., 1., 0., 5., 4., 3.]);
    assert!(f.same_storage(&t).unwrap());
    assert_reads(&f, &data);
    let ff = t.flip(&[0, -1]).unwrap();
    assert_eq!(ff.to_vec::<f32>().unwrap(), vec![5., 4., 3., 2., 1., 0.]);
    assert_eq!(ff.storage_offset(), 5);
    // Flipping back restores the original layout.
    let back = ff.flip(&[0, 1]).unwrap();
    assert_eq!((back.strides(), back.storage_offset()), (&[3i64, 1][..], 0));
    assert!(t.flip(&[2]).is_err());
    // Views of negative-stride views compose.
    let s = ff.narrow(1, 1, 2).unwrap().transpose(0, 1).unwrap();
    assert_reads(&s, &data);
}

#[test]
fn views_of_every_dtype_share_metadata_rules() {
    for dtype in DType::ALL {
        let t = Tensor::zeros(&[4, 6], dtype, Device::Cpu).unwrap();
        let v = t.narrow(1, 1, 4).unwrap().transpose(0, 1).unwrap().unfold(1, 2, 2).unwrap();
        assert_eq!(v.shape(), &[4, 2, 2]);
        assert_eq!(v.strides(), &[1, 12, 6]);
        assert_eq!(v.storage_offset(), 1);
        assert_eq!(v.dtype(), dtype);
        let base = t.data_ptr().unwrap() as usize;
        assert_eq!(v.data_ptr().unwrap() as usize, base + dtype.size());
    }
}

#[test]
fn a_small_view_pins_the_whole_storage() {
    let (t, _) = iota(&[1000]);
    let small = t.narrow(0, 10, 2).unwrap();
    drop(t);
    assert_eq!(small.nbytes(), 8);
    assert_eq!(small.storage_nbytes().unwrap(), 4000);
    assert_eq!(small.to_vec::<f32>().unwrap(), vec![10.0, 11.0]);
}
