//! Typed indices. Names are resolved to these once, when a model is built; nothing after that
//! looks anything up by name.

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// The id with index `i`. Ids normally come from [`crate::ModelBuilder`]; making one
            /// by hand is for tests of a single element.
            pub const fn new(i: usize) -> Self {
                Self(i as u32)
            }
            /// The index.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A node (position or orientation).
    NodeId
);
id_type!(
    /// An element.
    ElementId
);
id_type!(
    /// A deformation mode, numbered across all elements.
    ModeId
);
id_type!(
    /// A nodal coordinate, numbered across all nodes (the index into `x`).
    CoordId
);
