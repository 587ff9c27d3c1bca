! layer_fortran.f90: what a Fortran program meets with the layer
! (docs/MPI_LAYER.md, "Fortran").  An allreduce of DOUBLE PRECISION with
! MPI_SUM, and one of INTEGER with a non-commutative user operator made by
! MPI_OP_CREATE (each rank's integers follow its rank, and the operator
! keeps the left operand's lowest digit: the result must be rank 0's).
! Prints "layer_fortran: ok" on rank 0 when both are right.
program layer_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, op, i, bad
  double precision :: x(4), y(4)
  integer :: a(4), b(4)
  external :: keep_left
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  bad = 0
  x = rank + 1
  call MPI_ALLREDUCE(x, y, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (y(4) /= nprocs * (nprocs + 1) / 2) bad = bad + 1
  call MPI_OP_CREATE(keep_left, .false., op, ierr)
  do i = 1, 4
    a(i) = 10 * i + rank
  end do
  call MPI_ALLREDUCE(a, b, 4, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    if (b(i) /= 10 * i) bad = bad + 1
  end do
  call MPI_OP_FREE(op, ierr)
  if (bad /= 0) print *, 'rank', rank, ': wrong results', bad
  if (rank == 0 .and. bad == 0) print '(a,i0,a)', 'layer_fortran: ok (', nprocs, ' ranks)'
  call MPI_FINALIZE(ierr)
  if (bad /= 0) stop 1
end program layer_fortran

! inoutvec = invec (+) inoutvec, keeping invec's value: the lowest rank wins.
subroutine keep_left(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    inoutvec(i) = invec(i)
  end do
end subroutine keep_left
